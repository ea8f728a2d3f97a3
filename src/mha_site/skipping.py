"""Runs of a page's content that the browser may skip while they are off screen.

A run is the top-level blocks between two headings. ``wrap_runs`` puts each in a
``<div class="mha-run">``, and extra.css gives that one rule: ``content-visibility: auto`` with a
single height guess (``auto`` keeps a run's real height once it has been shown). Far from the
screen a run is neither styled nor laid out: on the lesson, 77% of whose 8,583 elements are KaTeX's
output, that is most of the work of a page load on a phone (issue 22).

Headings stay outside the runs: Material's table of contents reads their positions as the page
starts, and a heading inside a skipped run would make the browser lay that run out to answer.
So do the interactive widgets (the explorer, the live heads): a widget inside a run was drawn
where the run's guessed height put it, and a scroll to it (a script's, a link's) ended 2,700 px
past it once the runs around it had rendered.
A top-level block with a heading inside (mkdocstrings' API entries) is not a run: its own
children are split the same way.

The first two runs of a page are left as they are: they make the first screen, and Chromium
drew a run there at its guessed height in the first frame, then at its own (layout shift 0.015
on the causal-mask page, where the first heading moved up by 300 px).
"""

from __future__ import annotations

import re

from mha_site.html import element_end

__all__ = ["RUN_CLASS", "top_level_blocks", "wrap_runs"]

RUN_CLASS = "mha-run"
FIRST_SCREEN_RUNS = 2
# A block with one of these in it breaks a run and stays out of all runs: headings and the
# interactive widgets (whose own start tags carry WIDGET).
WIDGET = re.compile(r'class="mha-explorer"|\sdata-live-heads\b')
HEADING = re.compile(rf"<h[1-6]\b|{WIDGET.pattern}")
START_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9]*)\b[^>]*?(/?)>")
VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def top_level_blocks(content: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level element of ``content``, in order; text between them is left out.

    >>> page = '<h2 id="a">A</h2>\\n<p>x <b>y</b></p><div><div>z</div></div><hr>'
    >>> [page[s:e] for s, e in top_level_blocks(page)]
    ['<h2 id="a">A</h2>', '<p>x <b>y</b></p>', '<div><div>z</div></div>', '<hr>']
    """
    blocks, position = [], 0
    while (match := START_TAG.search(content, position)) is not None:
        name = match.group(1).lower()
        if name in VOID or match.group(2):
            end = match.end()
        else:
            end = element_end(content, match.start(), name)
        blocks.append((match.start(), end))
        position = end
    return blocks


def wrap_runs(content: str, unwrapped: int = FIRST_SCREEN_RUNS) -> str:
    """``content`` with each run of top-level blocks between headings in a ``div.mha-run``,
    except the first ``unwrapped`` runs.

    >>> wrap_runs('<h2 id="a">A</h2><p>1</p>\\n<p>2</p><h3 id="b">B</h3><p>3</p>', unwrapped=0)
    '<h2 id="a">A</h2><div class="mha-run"><p>1</p>\\n<p>2</p></div><h3 id="b">B</h3><div class="mha-run"><p>3</p></div>'
    >>> wrap_runs('<div class="doc"><h2 id="m">m</h2><div class="doc-contents"><p>x</p><h3 id="f">f</h3><p>y</p></div></div>', 1)
    '<div class="doc"><h2 id="m">m</h2><div class="doc-contents"><p>x</p><h3 id="f">f</h3><div class="mha-run"><p>y</p></div></div></div>'
    >>> wrap_runs('<p>a</p><div class="mha-explorer" data-src="h.json"><p>b</p></div><p>c</p>', 0)
    '<div class="mha-run"><p>a</p></div><div class="mha-explorer" data-src="h.json"><p>b</p></div><div class="mha-run"><p>c</p></div>'
    """
    return _wrap(content, [unwrapped])


def _wrap(content: str, unwrapped: list[int]) -> str:
    pieces: list[str] = []
    run_start = run_end = None
    position = 0

    def close_run() -> None:
        nonlocal run_start
        if run_start is not None:
            if unwrapped[0] > 0:
                unwrapped[0] -= 1
                pieces.append(content[run_start:run_end])
            else:
                pieces.append(f'<div class="{RUN_CLASS}">{content[run_start:run_end]}</div>')
            run_start = None

    for start, end in top_level_blocks(content):
        block = content[start:end]
        if not HEADING.search(block):
            if run_start is None:
                pieces.append(content[position:start])
                run_start = start
            run_end = position = end
            continue
        close_run()
        pieces.append(content[position:start])
        tag_end = content.index(">", start) + 1
        if block.startswith("<div") and not WIDGET.search(content, start, tag_end):
            inner_end = end - len("</div>")
            block = content[start:tag_end] + _wrap(content[tag_end:inner_end], unwrapped) + "</div>"
        pieces.append(block)
        position = end
    close_run()
    pieces.append(content[position:])
    return "".join(pieces)
