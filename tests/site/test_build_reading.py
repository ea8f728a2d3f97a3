"""mha_site.build.reading: the words and code lines a reader meets, and the minutes they take."""

from __future__ import annotations

from mha_site.build.reading import PageText, count_page_text


def test_minutes_add_prose_and_code_rounded_up():
    assert PageText(words=1000, code_lines=40).minutes == 7  # 5 min of prose, 2 of code


def test_an_empty_page_takes_one_minute():
    assert PageText(words=0, code_lines=0).minutes == 1


def test_formulas_permalinks_and_fallbacks_are_not_words_and_blank_code_lines_do_not_count():
    html = ('<h1>Title ¶</h1><p>One <code>x</code> two.</p><math><mi>q</mi></math>'
            '<pre><code>a = 1\n\nb = 2\n</code></pre><noscript><p>not read</p></noscript>')
    assert count_page_text(html) == PageText(words=4, code_lines=2)
