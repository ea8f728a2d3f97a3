"""Code blocks without the spans that change nothing on screen.

Pygments wraps every token in a ``<span>``, which a phone's browser styles as its own element.
Names, whitespace, and (with extra.css's variables) operators and punctuation are drawn in the
code colour itself; their spans were 1,087 of the causal-mask page's 1,950 elements and 3,843 of
the API page's 9,687 (issue 11), so the build keeps their text and drops the span.
"""

from __future__ import annotations

import re

__all__ = ["PLAIN_TOKEN_CLASSES", "drop_plain_token_spans"]

#: Pygments token classes drawn in the code colour (see ``extra.css``).
PLAIN_TOKEN_CLASSES = ("n", "o", "p", "w")

_BLOCK = re.compile(r"<pre\b[^>]*>.*?</pre>", re.S)
_PLAIN_SPAN = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(PLAIN_TOKEN_CLASSES))


def drop_plain_token_spans(content: str) -> str:
    """Unwrap name, operator, punctuation and whitespace tokens inside ``<pre>`` blocks.

    Inline code (outside ``<pre>``) is left alone.

    >>> drop_plain_token_spans('<pre><span></span><code><span class="n">x</span> '
    ...                        '<span class="o">=</span> <span class="mi">1</span></code></pre>')
    '<pre><code>x = <span class="mi">1</span></code></pre>'
    >>> drop_plain_token_spans('<code class="highlight"><span class="n">x</span></code>')
    '<code class="highlight"><span class="n">x</span></code>'
    """
    def plain(block: re.Match) -> str:
        return _PLAIN_SPAN.sub(r"\1", block.group(0).replace("<span></span>", "", 1))

    return _BLOCK.sub(plain, content)
