"""The build's steps (mha_site.build, run by hooks/site.py): KaTeX rendering, the notebook page,
page-specific assets (issue 11); the build's own checks on pages and paths (issue 21)."""

from __future__ import annotations

import functools
import html as html_module
import json
import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import markdown
import pytest
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from mha_site.build.page_assets import drop_plain_token_spans
from mha_site.build.material_internals import PLAIN_ENV, SEARCH_HOLD_BACK, start_scripts
from sitekit import ROOT, load_file_module

from mha_site.build import checks as build_checks
from mha_site.build import katex, notebook_page, page_assets

site = load_file_module("hooks/site.py")


def _page(src_uri: str, toc=(), url=""):
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri, url=url), toc=list(toc), url=url, meta={})


def _step(step, page, *args):
    """``step(*args)`` as hooks/site.py runs it: its ValueError a build error naming ``page``."""
    with site.stop_on_error(page):
        return step(*args)


@pytest.fixture(scope="module")
def renderer():
    return katex.Renderer(cache_dir=None)


def test_katex_renders_mathml_without_javascript_in_the_page(renderer):
    out = renderer.render(r"\frac{QK^\top}{\sqrt{d_k}}", display=True)
    assert out.startswith('<span class="katex"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block">')
    assert "<mfrac>" in out and "<msqrt>" in out and "katex-html" not in out
    # Search indexes the MathML's text; the TeX annotation is marked to skip.
    assert r'<annotation data-search-exclude encoding="application/x-tex">\frac{QK^\top}{\sqrt{d_k}}</annotation>' in out
    inline = renderer.render("d_k", display=False)
    assert inline.startswith('<span class="katex"><math xmlns="http://www.w3.org/1998/Math/MathML">')
    # \mathbb as its character: MathML Core ignores mathvariant="double-struck"
    assert "<mi>\u211d</mi>" in renderer.render(r"\mathbb{R}^{d}", display=False)


def test_a_variant_mathml_core_cannot_draw_fails_naming_page_and_formula():
    with pytest.raises(PluginError, match=r"lesson\.md: KaTeX cannot render the formula '\\\\mathfrak\{g\}': mathvariant='fraktur'"):
        site.on_page_content('<p><span class="arithmatex">\\(\\mathfrak{g}\\)</span></p>', _page("lesson.md"), {}, None)


def test_arithmatex_output_is_replaced_and_unescaped(renderer):
    content = ('<p>a <span class="arithmatex">\\(a &lt; b\\)</span></p>'
               '<div class="arithmatex">\\[\nx^2\n\\]</div>')
    out = katex.render_arithmatex(content, renderer.render)
    assert out.count('<span class="katex">') == 2 and out.count('display="block"') == 1
    assert "\\(" not in out and "\\[" not in out
    assert "<annotation data-search-exclude encoding=\"application/x-tex\">a &lt; b</annotation>" in out


def test_bad_tex_fails_the_build_naming_page_and_formula():
    content = '<p><span class="arithmatex">\\(\\frac{a\\)</span></p>'
    with pytest.raises(PluginError, match=r"lesson\.md: KaTeX cannot render the formula '\\\\frac\{a'"):
        site.on_page_content(content, _page("lesson.md"), {}, None)
    with pytest.raises(PluginError, match=r"nb\.ipynb: .*'\\\\nope'.*Undefined control sequence"):
        site.on_page_content(
            '<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown"><p>$\\nope$</p></div>', _page("nb.ipynb"), {}, None)


def test_notebook_math_is_rendered_in_markdown_cells_only(renderer):
    content = (
        '<div class="jp-Cell"><div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-MarkdownOutput">'
        "<p>cost $5 and $6, head $i$ of $$h$$, <code>$x$</code></p><div>nested $y$</div></div></div>"
        '<div class="jp-OutputArea"><pre>$z$</pre><p>$w$</p></div>'
    )
    out = katex.render_notebook_math(content, lambda tex, display: f"[{'D' if display else 'I'}:{tex}]")
    assert "cost $5 and $6, head [I:i] of [D:h], <code>$x$</code>" in out
    assert "nested [I:y]" in out
    assert "<pre>$z$</pre><p>$w$</p>" in out  # outputs are not Markdown: left alone


def test_notebook_toc_titles_get_mathml(renderer):
    item = SimpleNamespace(title="4. Mix with $W^O$", children=[])
    katex.render_page("<p>no math</p>", _page("nb.ipynb", [item]))
    assert item.title.startswith("4. Mix with <span class=\"katex\"><math") and "$" not in item.title


def test_notebook_page_keeps_cells_and_drops_template_css_scripts_and_widgets():
    content = (
        '<style type="text/css">.jp{}</style><script type="text/x-mathjax-config">x</script>'
        '<script src="data:,"></script><!-- End of mathjax configuration -->'
        '<div class="jupyter-wrapper"><div class="jp-Cell-inputWrapper" tabindex="0">'
        '<div class="jp-Collapser jp-InputCollapser jp-Cell-inputCollapser">\n</div>'
        '<div class="zeroclipboard-container">\n<clipboard-copy ,="" for="cell-1"><div>x</div></clipboard-copy>\n</div>\n'
        '<div class="clipboard-copy-txt" id="cell-1">import torch\n</div>\n'
        '<div class="highlight-ipynb hl-python"><pre><span></span><span class="kn">import</span> torch\n</pre></div>'
        '</div></div><h2 id="a">A<a class="anchor-link" href="#a">\u00b6</a></h2>'
    )
    out = notebook_page.clean_notebook_html(content)
    # nbconvert's permalinks become Material's, which stay hidden until the heading is hovered
    assert '<h2 id="a">A<a class="headerlink" href="#a" title="Permanent link">\u00b6</a></h2>' in out
    assert "<style" not in out and "<script" not in out and "<!--" not in out and "clipboard" not in out
    assert '<div class="language-python highlight"><pre><code><span class="kn">import</span> torch\n</code></pre></div>' in out
    assert 'tabindex' not in out and "jp-Collapser" not in out


def test_the_notebook_page_shows_each_cell_source_once(built_site):
    """The clipboard widget's plain-text copy of each cell showed under it as a paragraph."""
    notebook = Path(__file__).resolve().parents[2] / "docs" / "notebooks" / "mha-walkthrough.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    sources = "".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    html = (built_site / "notebooks/mha-walkthrough/index.html").read_text(encoding="utf-8")
    article = html.split("<article", 1)[1].split("</article>", 1)[0]
    text = html_module.unescape(re.sub(r"<[^>]+>", "", article))
    assert "clipboard-copy" not in html
    assert sources.count("import torch") >= 1
    assert text.count("import torch") == sources.count("import torch")


def test_page_assets_follow_the_components_on_the_page():
    assert page_assets.assets_for('<div class="quiz">') == (["assets/quiz/quiz.css"], ["assets/quiz/quiz.js"])
    assert page_assets.assets_for('<div class="quiz-feedback">') == ([], [])  # a class, not a prefix
    css, js = page_assets.assets_for('<span class="katex"></span><div class="mha-explorer" x>')
    assert css == ["assets/stylesheets/math.css", "assets/explorer/explorer.css"]
    # A component's scripts in load order: each reads what the ones before it put on its window object.
    assert js == ["assets/explorer/explorer-core.js", "assets/explorer/explorer-draw.js", "assets/explorer/explorer.js"]
    assert page_assets.assets_for('<div class="live-heads" data-live-heads>') == (
        ["assets/tiny-model/live-heads.css"], ["assets/tiny-model/live-heads-model.js", "assets/tiny-model/live-heads.js"])


def _site_files(docs: Path, sources: dict[str, str]) -> Files:
    """MkDocs' Files for ``sources`` (path under ``docs`` -> text), written there first."""
    for uri, text in sources.items():
        (docs / uri).parent.mkdir(parents=True, exist_ok=True)
        (docs / uri).write_text(text, encoding="utf-8")
    return Files([File(uri, str(docs), str(docs / "site"), use_directory_urls=True) for uri in sources])


def test_figures_get_intrinsic_size_and_lazy_loading(tmp_path):
    files = _site_files(tmp_path, {
        "assets/a.svg": '<?xml version="1.0"?>\n<svg width="432pt" height="216pt" viewBox="0 0 432 216">',
        "assets/b.svg": '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 180">',
    })
    content = '<img alt="A" src="../assets/a.svg" /><img alt="B" src="../assets/b.svg"><img src="data:image/gif;base64,R0lG">'
    out = page_assets.size_images(content, "page/", files)
    assert '<img alt="A" src="../assets/a.svg" width="576" height="288" decoding="async" />' in out
    assert '<img alt="B" src="../assets/b.svg" width="640" height="180" decoding="async" loading="lazy">' in out
    assert '<img src="data:image/gif;base64,R0lG" decoding="async" loading="lazy">' in out  # data: URLs need no file


def test_a_missing_image_fails_the_build_naming_page_and_src(tmp_path):
    files = _site_files(tmp_path, {"assets/a.svg": '<svg viewBox="0 0 4 3">'})
    page = _page("causal-mask.md", url="causal-mask/")
    assert 'width="4" height="3"' in site.on_page_content('<img alt="A" src="../assets/a.svg">', page, {}, files)
    with pytest.raises(PluginError) as error:
        site.on_page_content('<p><img alt="B" src="../assets/b.svg"></p>', page, {}, files)
    assert str(error.value) == "causal-mask.md: image '../assets/b.svg' is missing: the site has no file 'assets/b.svg'"


def test_an_svg_with_a_bad_viewbox_fails_the_build_naming_page_file_and_value(tmp_path):
    files = _site_files(tmp_path, {"assets/a.svg": '<svg viewBox="0 0 640px 180">', "assets/b.svg": '<svg viewBox="0 0 0 9">'})
    page = _page("index.md")
    with pytest.raises(PluginError) as error:
        site.on_page_content('<img alt="A" src="assets/a.svg">', page, {}, files)
    assert str(error.value) == (f"index.md: image 'assets/a.svg' ({tmp_path / 'assets' / 'a.svg'}): "
                                "viewBox '0 0 640px 180' is not four numbers: min-x, min-y, width, height")
    with pytest.raises(PluginError, match=r"b\.svg.*viewBox '0 0 0 9' has a width or height that is not positive"):
        site.on_page_content('<img alt="B" width="9" height="9" src="assets/b.svg">', page, {}, files)


def test_the_notebook_figures_are_site_files_the_image_check_finds(tmp_path):
    """mha_site/build/notebook_page.py moves the notebook's inline SVGs to files of the site, which
    MkDocs writes and mha_site/build/page_assets.py finds (and sizes) like any figure in docs/."""
    # What File.generated reads of MkDocs' config while a hook runs.
    config = SimpleNamespace(site_dir=str(tmp_path), use_directory_urls=True,
                             plugins=SimpleNamespace(_current_plugin="notebook_page"))
    files = Files([])
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notebooks/nb.ipynb", url="notebooks/nb/"), url="notebooks/nb/")
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="300pt" height="150pt"></svg>'
    figure = f'<p><img alt="A plot" src="data:image/svg+xml,{quote(svg)}"></p>'
    content = notebook_page.clean_notebook_page(figure * 2, page, config, files)
    (name,) = [file.src_uri for file in files]  # the same figure twice is one file
    assert name.startswith("notebooks/nb/figure-") and files.get_file_from_path(name).content_string == svg
    out = page_assets.content_passes(content, page, config, files)
    assert out.count(f'src="{name.rsplit("/", 1)[1]}" loading="lazy" width="400" height="200"') == 2


def test_an_unclosed_quiz_fails_the_build_naming_page_and_element():
    """Markdown closes a <div markdown> left open only at the end of the page, so the rest of the
    page went inside the quiz (hidden until answered) and the build passed (mha_site/build/checks.py)."""
    quiz = ('<div class="quiz" id="quiz-q" data-quiz="choice" markdown>\n\n**1. Why?**\n\n'
            '<details class="quiz-answer" markdown>\n<summary>Show</summary>\n\nBecause.\n\n</details>\n{end}\n'
            "## Next section\n\nMore text.\n")
    render = functools.partial(markdown.markdown, extensions=["md_in_html", "toc"])
    assert build_checks.components_closed(render(quiz.format(end="</div>\n")))
    unclosed = render(quiz.format(end=""))
    assert unclosed.count("<div") == unclosed.count("</div>"), "Markdown closed it at the end: counts agree"
    with pytest.raises(PluginError) as error:
        _step(build_checks.components_closed, _page("index.md"), unclosed)
    assert str(error.value) == ('index.md: unbalanced HTML (in the page or a file it includes): <div class="quiz" '
                                'data-quiz="choice" id="quiz-q"> is not closed before the heading <h2 id="next-section">')
    # a raw HTML block (no markdown attribute) left open stays open to the end of the page
    with pytest.raises(PluginError, match=r"^api\.md: .*<details> is not closed before </div>$"):
        _step(build_checks.components_closed, _page("api.md"), "<div><details><p>x</p></div>")


def test_the_snippets_and_notebook_cache_resolve_from_the_config_file_folder():
    """mha_site/build/checks.py: `mkdocs build -f elsewhere/mkdocs.yml` reads snippets from elsewhere/,
    not from the working directory (MkDocs itself resolves docs_dir, hooks and custom_dir so)."""
    config = _Config(mdx_configs={"pymdownx.snippets": {"base_path": ["src", "docs/_includes", ".", "/abs"]}})
    config.config_file_path = "/repo/mkdocs.yml"
    config.plugins = {"mkdocs-jupyter": SimpleNamespace(config={"cache_dir": ".cache/mkdocs-jupyter"})}
    build_checks.anchor_paths(config)
    assert config["mdx_configs"]["pymdownx.snippets"]["base_path"] == ["/repo/src", "/repo/docs/_includes", "/repo/.", "/abs"]
    assert config.plugins["mkdocs-jupyter"].config["cache_dir"] == "/repo/.cache/mkdocs-jupyter"


class _Config(dict):
    """Just enough of MkDocsConfig for anchor_paths: items, config_file_path, plugins."""


def test_explorer_fallback_is_not_fetched_when_scripts_run():
    content = ('<div class="mha-explorer"><div class="mha-explorer__fallback"><div><img src="x.svg"></div></div>'
               '<p class="mha-explorer__caption">c</p></div>')
    out = page_assets.fallback_in_noscript(content)
    assert out == ('<div class="mha-explorer"><noscript><div class="mha-explorer__fallback"><div><img src="x.svg">'
                   '</div></div></noscript><p class="mha-explorer__caption">c</p></div>')
    # Every fallback on a page is wrapped (the helper used to wrap the first only).
    assert page_assets.fallback_in_noscript(content + content) == out + out


def test_no_page_nests_a_noscript_in_another(built_site):
    """A <noscript> inside another is invalid HTML (the lesson's explorer fallback had one)."""
    for path in built_site.rglob("*.html"):
        depth = 0
        for tag in re.findall(r"<(/?)noscript\b", path.read_text(encoding="utf-8")):
            depth += -1 if tag else 1
            assert depth <= 1, f"{path.relative_to(built_site)}: <noscript> inside <noscript>"


def test_every_material_table_rule_is_carried_over_to_our_tables(built_site):
    """tables.css (mha_site/build/page_assets.py) restates each selector Material writes for
    table:not([class]) for the tables the build wraps itself (mha_site.build.tables)."""
    material = next((built_site / "assets" / "stylesheets").glob("main.*.min.css")).read_text(encoding="utf-8")
    ours = (built_site / "assets" / "stylesheets" / "tables.css").read_text(encoding="utf-8")
    theirs = sorted(s.strip() for rule in re.findall(r"([^{}]*)\{[^{}]*\}", material)
                    for s in rule.split(",") if "table:not([class])" in s)
    carried = sorted(s.strip().replace("table.mha-table", "table:not([class])")
                     for rule in re.findall(r"([^{}]*)\{[^{}]*\}", ours.split("*/", 1)[1]) for s in rule.split(","))
    assert theirs and carried == [s.removeprefix("@media print{") for s in theirs]


def test_markdown_tables_are_wrapped_at_build_time(built_site):
    for page in ["", "benchmark/", "inference/", "api/layer/"]:
        html = (built_site / page / "index.html").read_text(encoding="utf-8")
        article = html[html.find("<article"):html.find("</article>")]
        assert "<table>" not in article, page
        assert article.count('<table class="mha-table">') == article.count('<div class="md-typeset__table">') > 0, page


def test_plain_code_tokens_lose_their_spans_and_keep_their_text():
    html = highlight("def f(x: int) -> int:\n    return x ** 2  # square\n", PythonLexer(), HtmlFormatter())
    out = drop_plain_token_spans(html)

    def text(markup: str) -> str:
        return re.sub(r"<[^>]+>", "", markup)

    assert text(out) == text(html)
    assert not re.search(r'<span class="[nopw]">', out) and "<span></span>" not in out
    for kept in ["k", "nf", "nb", "mi", "c1"]:  # keyword, function name, builtin, number, comment
        assert html.count(f'<span class="{kept}">') == out.count(f'<span class="{kept}">') > 0, kept


def test_built_code_blocks_hold_no_plain_token_spans(built_site):
    for page in ["", "causal-mask/", "api/layer/", "notebooks/mha-walkthrough/"]:
        html = (built_site / page / "index.html").read_text(encoding="utf-8")
        blocks = re.findall(r"<pre\b.*?</pre>", html, flags=re.S)
        assert blocks, page
        # A span that holds only text is gone (mkdocstrings' <span class="n"><span title=...> stays).
        assert not any(re.search(r'<span class="[nopw]">[^<]*</span>', block) for block in blocks), page
        assert any('<span class="k">' in block or '<span class="kn">' in block for block in blocks), page


def test_every_script_is_loaded_after_the_first_paint_and_the_index_on_first_search(built_site):
    """mha_site.build.material_internals: no page lets the parser run a script file; one loader runs
    the bundle first, then a11y.js, then the page's own scripts, and the search index is held
    back until search is opened."""
    for page in ["", "causal-mask/", "inference/", "tiny-model/", "real-models/", "benchmark/", "api/", "notebooks/mha-walkthrough/"]:
        html = (built_site / page / "index.html").read_text(encoding="utf-8")
        assert "<script src" not in html, page
        loaders = re.findall(r"const scripts = (\[[^\]]*\])\.map", html)
        assert len(loaders) == 1, page
        sources = [src.rsplit("/", 1)[-1] for src in json.loads(loaders[0])]
        assert sources[0].startswith("bundle.") and sources[1] == "a11y.js", (page, sources)
        assert html.count(SEARCH_HOLD_BACK) == 1 and html.index(SEARCH_HOLD_BACK) < html.index("const scripts ="), page
        if page == "tiny-model/":
            assert sources[-2:] == ["live-heads-model.js", "live-heads.js"], sources


def _material_scripts_block() -> str:
    """Material's ``scripts`` block as base.html writes it: its bundle and extra_javascript as tags."""
    import material

    bundle = next((Path(material.__file__).parent / "templates/assets/javascripts").glob("bundle.*.min.js")).name
    return f'\n  <script src="assets/javascripts/{bundle}"></script>\n  <script src="assets/javascripts/a11y.js"></script>\n'


def test_a_plain_material_build_has_none_of_the_speed_code(tmp_path, monkeypatch):
    """make perf's baseline (MHA_PLAIN_MATERIAL=1, tests/site/perf.py) is the same pages with
    none of the speed code: Material's own script tags, no loader, no held-back index, every
    component's files on every page, nothing done to images, code spans or tables. The site's build has each of them; what is not speed (the image check,
    figures that scroll, focusable regions) is in both."""
    from mkdocs.theme import Theme

    configs = {}
    for value in ("1", "0"):
        monkeypatch.setenv(PLAIN_ENV, value)
        page_assets.mark_plain(configs.setdefault(value, {"extra": {}}))
    plain, site_config = configs["1"], configs["0"]
    monkeypatch.setenv(PLAIN_ENV, "true")
    with pytest.raises(ValueError, match=f"{PLAIN_ENV} must be 1 .* got 'true'"):
        page_assets.mark_plain({"extra": {}})

    page = _page("index.md")
    content = '<span class="katex">x</span><div class="quiz"></div>'
    ours, theirs = (page_assets.page_assets(content, config) for config in (site_config, plain))
    assert ours == {"preload": [page_assets.MATH_FONT], "css_first": ["assets/stylesheets/math.css"],
                    "css": ["assets/quiz/quiz.css"], "js": ["assets/quiz/quiz.js"]}
    assert theirs["preload"] == [] and theirs["js"] == [
        "assets/explorer/explorer-core.js", "assets/explorer/explorer-draw.js", "assets/explorer/explorer.js",
        "assets/quiz/quiz.js", "assets/tiny-model/live-heads-model.js", "assets/tiny-model/live-heads.js",
        "assets/try/try.js"]
    assert "assets/explorer/explorer.css" in theirs["css"] and page_assets.TABLES_CSS not in theirs["css"]
    block = _material_scripts_block()
    ours, theirs = (start_scripts(block, ["p.js"], plain=value) for value in (False, True))
    assert "<script src" not in ours and "const scripts =" in ours and SEARCH_HOLD_BACK in ours
    assert "dispatchEvent" not in theirs and "XMLHttpRequest" not in theirs and "mhaScripts" not in theirs
    tags = re.findall(r'<script src="([^"]+)"></script>', theirs)
    assert tags[0].startswith("assets/javascripts/bundle.") and tags[1:] == ["assets/javascripts/a11y.js", "p.js"]
    # mkdocstrings links its stylesheet on every page; the site links it where the API's markup is.
    mkdocstrings_first = {"extra": {}, "extra_css": [page_assets.MKDOCSTRINGS_CSS, "assets/stylesheets/extra.css"]}
    monkeypatch.setenv(PLAIN_ENV, "0")
    page_assets.mark_plain(mkdocstrings_first)
    assert mkdocstrings_first["extra_css"] == ["assets/stylesheets/extra.css"]
    assert page_assets.page_assets('<div class="doc doc-contents">', mkdocstrings_first)["css_first"] == [page_assets.MKDOCSTRINGS_CSS]

    files = _site_files(tmp_path, {"a.svg": '<svg viewBox="0 0 4 3">'})
    code = highlight("x = 1\n", PythonLexer(), HtmlFormatter())
    content = f'<p><img src="a.svg"><img src="a.svg"></p><table><tr><td>1</td></tr></table>{code}'
    ours, theirs = (page_assets.content_passes(content, page, config, files) for config in (site_config, plain))
    assert 'loading="lazy"' in ours and 'width="4"' in ours and "<img" in theirs and not re.search("loading=|width=|decoding=", theirs)
    assert "mha-table" in ours and "<table>" in theirs
    assert '<span class="n">x</span>' in theirs and '<span class="n">' not in ours
    assert theirs.count('class="figure-scroll"') == 2 and 'tabindex="0"' in theirs
    with pytest.raises(ValueError, match="is missing"):
        page_assets.content_passes('<img src="b.svg">', page, plain, files)

    template = Theme(name="material", custom_dir=str(ROOT / "overrides")).get_env().get_template("main.html")
    head = {key: "".join(template.blocks["extrahead"](template.new_context({"config": config})))
            for key, config in (("ours", site_config), ("theirs", plain))}
    assert head["ours"] == head["theirs"] and "mhaScheme" in head["theirs"], "the light/dark switch is no speed code"


def test_material_features_that_act_on_content_have_content_to_act_on(built_site):
    """Material's per-block features cost start-up work on every page (issue 11), so one is
    turned on only when some page has what it works on: annotated code blocks for
    content.code.annotate, more than one set of linked tabs for content.tabs.link."""
    pages = {path: path.read_text(encoding="utf-8") for path in built_site.rglob("*.html")}
    features = set(json.loads(re.search(r'<script id="__config" type="application/json">(.*?)</script>',
                                         pages[built_site / "index.html"], re.S).group(1))["features"])
    # Material reads a code annotation from a comment "(1)" in a code block and the list right
    # after the block; other annotations from an element of class "annotate".
    def annotated(text: str) -> bool:
        if re.search(r'class="[^"]*\bannotate\b', text):
            return True
        for block in re.finditer(r"<pre\b.*?</pre>\s*</div>\s*(<ol>)?", text, re.S):
            if block.group(1) and re.search(r'<span class="c[^"]*">[^<]*\(\d+\)', block.group(0)):
                return True
        return False

    if "content.code.annotate" in features:
        assert any(map(annotated, pages.values())), "content.code.annotate is on, but nothing is annotated"
    tab_sets = sum(text.count('class="tabbed-set') for text in pages.values())
    if "content.tabs.link" in features:
        assert tab_sets > 1, f"content.tabs.link is on, with {tab_sets} set(s) of tabs on the whole site"
    assert {"content.lazy", "search.highlight", "navigation.top"} <= features


def test_every_region_that_may_scroll_sideways_takes_focus_without_scripts(built_site):
    """A keyboard user scrolls only what can take focus; whether a region overflows depends on
    the screen and the font, so the build makes each one focusable (a11y.js refines it near the
    screen). A checker that read the API pages without scrolling found their doctests out of reach."""
    checked = 0
    for page in ["", "causal-mask/", "benchmark/", "api/layer/", "api/benchmark/", "notebooks/mha-walkthrough/"]:
        html = (built_site / page / "index.html").read_text(encoding="utf-8")
        regions = re.findall(r'<pre\b[^>]*>(?:<span></span>)?<code\b[^>]*>|<div class="arithmatex[^"]*"[^>]*>'
                             r'|<(?:span|div) class="figure-scroll"[^>]*>|<div class="md-typeset__scrollwrap[^"]*"[^>]*>'
                             r'|(?<=data-mime-type="text/plain" tabindex="0">\n)<pre\b[^>]*>', html)
        assert regions, page
        assert [r for r in regions if 'tabindex="0"' not in r] == [], page
        checked += len(regions)
    assert checked > 100


def test_the_material_contracts_the_site_keeps_hold(built_site):
    """What the site relies on in Material beyond its documented blocks and settings, read from
    the installed theme; a failure names its version (issue 22). The speed measures that rest on
    these are measured in the issue's note; each line says which file depends on it.
    """
    import importlib.metadata
    import inspect

    import material
    from material.plugins.search import plugin as search_plugin

    version = importlib.metadata.version("mkdocs-material")
    templates = Path(material.__file__).parent / "templates"
    assets = built_site / "assets"
    bundle = next((assets / "javascripts").glob("bundle.*.min.js")).read_text(encoding="utf-8")
    css = next((assets / "stylesheets").glob("main.*.min.css")).read_text(encoding="utf-8")
    header = (templates / "partials" / "header.html").read_text(encoding="utf-8")
    contracts = {
        # mha_site.build.material_internals' loader: the bundle starts its components from document$, which
        # DOMContentLoaded feeds once, and exposes it as window.document$
        "the bundle starts on DOMContentLoaded through window.document$":
            '"DOMContentLoaded",{once:!0}).subscribe(()=>' in bundle and "window.document$=" in bundle,
        # mha_site.build.material_internals' hold-back: the index is requested with XMLHttpRequest's open
        # (method, URL), then send(), at search/search_index.json, and search opens on f, s and /
        "the bundle requests search/search_index.json with XMLHttpRequest open, then send":
            'new URL("search/search_index.json",' in bundle
            and re.search(r'new XMLHttpRequest;return (\w+)\.open\("GET",`\$\{\w+\}`\).*?\1\.send\(\)', bundle) is not None,
        "the bundle opens search on the keys f, s and /": 'case"f":case"s":case"/":' in bundle,
        # a11y.js: the search box's value, read by the bundle on each keyup, is what lunr parses
        "the bundle reads the search query from the input's value on keyup":
            re.search(r'\(\w+,"keyup"\),\w+\)\.pipe\(\w+\(\(\)=>\w+\.value\)', bundle) is not None,
        "the search toggle is #__search and the search dialog .md-search":
            'id="__search"' in (templates / "base.html").read_text(encoding="utf-8")
            and '<div class="md-search"' in (templates / "partials" / "search.html").read_text(encoding="utf-8"),
        # overrides/main.html: the light/dark switch goes before the search button, in the header's bar
        "the header's search button is a label for __search in .md-header__inner":
            'class="md-header__inner' in header and '<label class="md-header__button md-icon" for="__search">' in header,
        # mkdocs.yml: one palette, so no palette component (and its restyles) at load
        "a single palette (a mapping) renders no palette component":
            "{% if not config.theme.palette is mapping %}" in header,
        # mha_site.build.tables: Markdown tables wrapped as the bundle does
        "the bundle wraps table:not([class]) in md-typeset__scrollwrap > md-typeset__table":
            all(name in bundle for name in ("table:not([class])", "md-typeset__scrollwrap", "md-typeset__table")),
        # mha_site.build.page_assets: Pygments spans the theme draws in the code colour
        "code tokens are coloured by --md-code-hl-name/operator/punctuation-color":
            all(f"--md-code-hl-{kind}-color" in css for kind in ("name", "operator", "punctuation")),
        # mha_site/build/page_assets.py: code, quizzes and collapsed boxes kept out of the index
        "the search plugin skips elements with data-search-exclude": "data-search-exclude" in inspect.getsource(search_plugin),
    }
    broken = [name for name, holds in contracts.items() if not holds]
    assert broken == [], f"mkdocs-material {version} breaks what the site relies on: {broken}"


def test_the_lowest_material_allowed_is_the_one_the_suite_runs():
    """pyproject's range for mkdocs-material starts at the version constraints.txt pins, which is
    the one installed and tested: a range reaching lower would promise a theme nobody has built
    the site with (the contracts above and the overrides were read from this version)."""
    import importlib.metadata
    import tomllib

    from packaging.requirements import Requirement

    root = Path(__file__).resolve().parents[2]
    docs = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]["docs"]
    requirement = next(Requirement(line) for line in docs if Requirement(line).name == "mkdocs-material")
    lowest = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    pinned = re.search(r"^mkdocs-material==(\S+)$", (root / "constraints.txt").read_text(encoding="utf-8"), re.M)
    installed = importlib.metadata.version("mkdocs-material")
    assert pinned and lowest == [pinned.group(1)] == [installed], (
        f"pyproject allows mkdocs-material {requirement.specifier}, constraints.txt pins "
        f"{pinned and pinned.group(1)}, {installed} is installed: the lowest allowed must be the one tested")
    assert installed in requirement.specifier


# --- one clear line, no traceback: a missing snippet, a broken notebook, a notebook cache entry cut short ---


def _snippet_config(root: Path) -> _Config:
    config = _Config(mdx_configs={"pymdownx.snippets": {"base_path": [str(root / "src"), str(root / "inc")]}})
    config.config_file_path = str(root / "mkdocs.yml")
    return config


@pytest.mark.parametrize(("page_text", "message"), [
    ('--8<-- "pkg/code.py:gone"',
     'snippet "pkg/code.py:gone": src/pkg/code.py has no section \'gone\' (no \'--8<-- [start:gone]\' line)'),
    ('--8<-- "pkg/none.py:body"',
     'snippet "pkg/none.py:body": no such file in src or inc (pymdownx.snippets base_path)'),
    ('Text.\n\n--8<-- "outer.md"\n',
     'snippet "missing.md" (in inc/outer.md): no such file in src or inc (pymdownx.snippets base_path)'),
])
def test_a_missing_snippet_file_or_section_fails_the_build_naming_page_file_and_section(tmp_path, page_text, message):
    """pymdownx.snippets raised SnippetMissingError with a traceback before MkDocs' line: the hook
    names page, file and section first (mha_site/build/checks.py)."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "code.py").write_text("# --8<-- [start:body]\nx = 1\n# --8<-- [end:body]\n")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "outer.md").write_text('Intro.\n\n--8<-- "missing.md"\n')
    config = _snippet_config(tmp_path)
    fine = '--8<-- "pkg/code.py:body"\n;--8<-- "escaped.md"\n'
    assert site.on_page_markdown(fine, _page("lesson.md"), config, None) == fine
    with pytest.raises(PluginError) as error:
        site.on_page_markdown(page_text, _page("lesson.md"), config, None)
    assert str(error.value) == f"lesson.md: {message}"


@pytest.mark.parametrize(("text", "problem"), [
    ('{"cells": [{"cell_type": "markdown", "sou', "is not valid JSON: Unterminated string starting at"),
    ("{}", 'is not a notebook: it has no list of "cells"'),
])
def test_a_broken_notebook_fails_the_build_naming_the_file_not_nbconvert(tmp_path, text, problem):
    config = _snippet_config(tmp_path)
    page = _page("notebooks/walk.ipynb")
    page.file.abs_src_path = str(tmp_path / "docs" / "notebooks" / "walk.ipynb")
    with pytest.raises(PluginError) as error:
        site.on_page_markdown(text, page, config, None)
    first, _, rest = str(error.value).partition(" ")
    assert first == "notebooks/walk.ipynb:" and rest.startswith(f"docs/notebooks/walk.ipynb {problem}")
    assert rest.endswith("restore it with git checkout -- docs/notebooks/walk.ipynb") and "\n" not in rest


def test_a_notebook_cache_entry_cut_short_is_dropped_before_it_breaks_the_build(tmp_path):
    """mkdocs-jupyter writes its cache in place and reads it unchecked (a JSONDecodeError naming the page)."""
    whole = json.dumps({"content": "<p>cell</p>", "toc_tokens": [], "title": None})
    (tmp_path / "good.json").write_text(whole)
    (tmp_path / "cut.json").write_text(whole[:20])
    (tmp_path / "other.json").write_text("{}")
    config = _Config()
    config.plugins = {"mkdocs-jupyter": SimpleNamespace(config={"cache": True, "cache_dir": str(tmp_path)})}
    assert build_checks.drop_broken_notebook_cache(config) == [tmp_path / "cut.json", tmp_path / "other.json"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["good.json"]


def test_redirect_pages_are_written_again_by_a_dirty_build_but_never_over_a_page(tmp_path: Path):
    from mha_site.build.course import MOVED_PAGES, write_redirects

    config = {"site_dir": str(tmp_path), "site_url": None}
    write_redirects(config)
    first = {old: (tmp_path / old / "index.html").read_bytes() for old in MOVED_PAGES}
    write_redirects(config)  # mkdocs build --dirty into the same folder
    assert {old: (tmp_path / old / "index.html").read_bytes() for old in MOVED_PAGES} == first
    old = next(iter(MOVED_PAGES))
    (tmp_path / old / "index.html").write_text("<!doctype html><title>A real page</title>", encoding="utf-8")
    with pytest.raises(ValueError, match=f"redirect from {old} to .*: the build already has a page at"):
        write_redirects(config)
