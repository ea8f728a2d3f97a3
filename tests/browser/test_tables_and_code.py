"""Tables and code as the build leaves them (mha_site.build.tables, mha_site.build.page_assets): they look as
Material would make them, and code in a table breaks only between words.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

@pytest.mark.parametrize("path", ["", "benchmark/"])
def test_code_in_a_table_breaks_only_between_words(new_page, path) -> None:
    """Material lets inline code break anywhere: at 375 px the lesson's head table showed
    'coreferenc' and 'e' on two lines (review). A table scrolls sideways instead."""
    page = new_page(width=375, height=800)
    page.goto(path)
    split = page.evaluate("""() => [...document.querySelectorAll('.md-typeset__table code')]
        .filter((code) => code.getClientRects().length > 1 && !/\\s/.test(code.textContent))
        .map((code) => code.textContent)""")
    assert page.locator(".md-typeset__table code").count() > 3
    assert split == []


def test_tables_keep_materials_look_and_are_not_wrapped_again(new_page) -> None:
    page = new_page()
    page.goto("benchmark/")
    tables = page.locator("article table")
    assert tables.count() >= 5
    assert page.locator(".md-typeset__scrollwrap .md-typeset__scrollwrap").count() == 0
    assert page.locator(".md-typeset__scrollwrap > .md-typeset__table > table.mha-table").count() == tables.count()
    style = tables.first.evaluate("""t => { const s = getComputedStyle(t), c = getComputedStyle(t.querySelector('td'));
        return [s.display, s.fontSize, s.borderTopStyle, c.paddingLeft, c.borderTopStyle]; }""")
    root_px = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert style[0] == "inline-block" and style[1] == f"{0.64 * root_px:g}px", style
    assert style[2] == "solid" and style[4] == "solid" and float(style[3].removesuffix("px")) > 5, style
    assert page.console_errors == []


# The colour a token span would have inside the page's first code block, against the block's own.
TOKEN_COLOURS = """
() => {
  const code = document.querySelector('article pre > code');
  const colour = (cls) => {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = 'x';
    code.appendChild(span);
    const value = getComputedStyle(span).color;
    span.remove();
    return value;
  };
  return {code: getComputedStyle(code).color, n: colour('n'), o: colour('o'), p: colour('p'),
          w: colour('w'), k: colour('k'), mi: colour('mi'), ow: colour('ow'), kc: colour('kc'),
          constant: colour('no'),
          plainSpans: document.querySelectorAll('article pre span.n, article pre span.o, '
                                                 + 'article pre span.p, article pre span.w').length};
}
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_code_tokens_without_spans_look_as_they_would_with_them(new_page, scheme) -> None:
    """The build drops name, operator, punctuation and whitespace spans (mha_site.build.page_assets):
    extra.css draws those tokens in the code colour, so a span would change nothing."""
    page = new_page(color_scheme=scheme)
    page.goto("causal-mask/")
    colours = page.evaluate(TOKEN_COLOURS)
    assert colours["plainSpans"] == 0
    assert colours["n"] == colours["o"] == colours["p"] == colours["w"] == colours["code"], colours
    assert colours["k"] != colours["code"] and colours["mi"] != colours["code"], "keywords and numbers keep colour"
    assert colours["ow"] == colours["k"], "in, is, not, and, or read as keywords"
    assert colours["kc"] == colours["constant"] != colours["code"], "True, False, None read as constants"
