"""mha_site.build.page_assets: figure sizes, code spans, focusable scroll regions and what search
leaves out. (Which files a page links, and the passes in a build: tests/site/test_build_hooks.py.)"""

from __future__ import annotations

from mha_site.build.page_assets import drop_plain_token_spans, focusable_scroll_regions, out_of_search, svg_size


def test_svg_size_reads_points_as_css_pixels_and_a_comma_separated_viewbox():
    assert svg_size(b'<svg width="432pt" height="216pt">') == (576, 288)
    assert svg_size(b'<svg viewBox="0,0 640 180">') == (640, 180)


def test_plain_token_spans_are_dropped_in_code_blocks():
    block = ('<pre><span></span><code><span class="n">x</span> '
             '<span class="o">=</span> <span class="mi">1</span></code></pre>')
    assert drop_plain_token_spans(block) == '<pre><code>x = <span class="mi">1</span></code></pre>'


def test_plain_token_spans_are_kept_in_inline_code():
    inline = '<code class="highlight"><span class="n">x</span></code>'
    assert drop_plain_token_spans(inline) == inline


def test_every_region_that_may_scroll_gets_tabindex_once():
    content = ('<pre><span></span><code>x</code></pre><div class="arithmatex">y</div>'
               '<pre><code tabindex="0">z</code></pre><div data-mime-type="text/plain"><pre>1</pre>')
    assert focusable_scroll_regions(content) == (
        '<pre><span></span><code tabindex="0">x</code></pre><div class="arithmatex" tabindex="0">y</div>'
        '<pre><code tabindex="0">z</code></pre><div data-mime-type="text/plain"><pre tabindex="0">1</pre>')


def test_code_blocks_and_collapsed_boxes_are_kept_out_of_search():
    content = '<div class="language-python highlight"><pre>x</pre></div><details class="info">'
    assert out_of_search(content) == (
        '<div data-search-exclude class="language-python highlight"><pre>x</pre></div>'
        '<details data-search-exclude class="info">')
