"""The places where the site relies on Material for MkDocs' internals (not on its documented
blocks and settings), and the switch that builds the site without any speed code.

The first two are kept because they measured as paying on a phone (Lighthouse 12.2.3, mobile preset,
medians of 3 interleaved rounds; issues 22 and 33): with them every page scored 99-100 with LCP
1.36-1.90 s; without them (commit 88bb028) the lesson scored 93 with LCP 2.61 s, and the
causal-mask and real-heads pages missed the 2.5 s LCP budget. Material is in maintenance mode
since 9.7.0 and pyproject pins it below 9.9; ``test_the_material_contracts_the_site_keeps_hold``
(tests/site/test_build_hooks.py) reads what each relies on from the installed theme.

* :data:`SCRIPT_LOADER` runs Material's bundle, ``a11y.js`` and the page's scripts after the first
  paint (the causal-mask page: performance 88 -> 98, TBT 389 -> 66 ms, LCP 2.30 -> 1.81 s). It
  relies on the bundle starting from ``window.document$``, which ``DOMContentLoaded`` feeds once.
* :data:`SEARCH_HOLD_BACK` holds back the search index (about 50 KiB gzip) until the reader first
  opens search (without it the causal-mask and real-heads pages' LCP was 2.55 and 2.70 s). It
  relies on the bundle requesting the index with ``XMLHttpRequest``, on the toggle ``#__search``,
  its labels and ``.md-search``, and on Material's search keys (f, s, /).

The third is not about speed: ``a11y.js`` hands Material a search query with ``W^O`` written as the
index holds the rendered maths (lunr reads ``^`` as a boost: the query failed). Material 9 removed
its documented search transforms, so this relies on the bundle reading the box's ``value`` on keyup.

``MHA_PLAIN_MATERIAL=1`` builds "plain Material", ``make perf``'s baseline: the theme's own
script tags, and none of the speed passes that read :data:`PLAIN_KEY`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

__all__ = ["PLAIN_ENV", "PLAIN_KEY", "SCRIPT_LOADER", "SEARCH_HOLD_BACK", "plain_material", "start_scripts"]

PLAIN_ENV = "MHA_PLAIN_MATERIAL"
#: ``config.extra[PLAIN_KEY]``: set by mha_site.build.page_assets from :func:`plain_material`.
PLAIN_KEY = "mha_plain_material"

# Material requests the index with XMLHttpRequest: send() is held back for that one URL until
# the reader opens search. Every other request passes straight through.
SEARCH_HOLD_BACK = """<script>(() => {
  "use strict";
  const INDEX = /\\/search\\/search_index\\.json$/;
  const { open: xhrOpen, send: xhrSend } = XMLHttpRequest.prototype;
  let openSearch;
  const searchOpened = new Promise((resolve) => { openSearch = resolve; });
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    this.mhaIsIndex = INDEX.test(new URL(url, location.href).pathname);
    return xhrOpen.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (...args) {
    if (!this.mhaIsIndex) return xhrSend.apply(this, args);
    searchOpened.then(() => xhrSend.apply(this, args));
  };
  const typing = (target) => target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  const SEARCH = "#__search, .md-search, label[for='__search']";
  addEventListener("focusin", (event) => { if (event.target.closest && event.target.closest(SEARCH)) openSearch(); });
  addEventListener("pointerdown", (event) => { if (event.target.closest && event.target.closest(SEARCH)) openSearch(); });
  addEventListener("keydown", (event) => {
    if (["f", "s", "/"].includes(event.key) && !typing(event.target)) openSearch();
  });
  // A page opened from a search result (?h=terms) highlights the terms, which needs the index.
  if (new URLSearchParams(location.search).has("h")) openSearch();
})();</script>"""

# Loads the page's scripts, in order, once the first frame is painted (or at once in a hidden tab,
# which paints nothing). DOMContentLoaded has fired before the bundle runs, so it is sent again if
# document$ has not emitted, in a task of its own: the bundle's evaluation and its components'
# start were one task of 110 ms on the lesson (no throttling), 440 ms at Lighthouse's 4x slowdown.
SCRIPT_LOADER = """<script>{
  window.mhaScripts = "pending";  // "loaded" once all have run and Material has started (tests wait for it)
  let waiting = 2;
  const done = () => { if (--waiting === 0) window.mhaScripts = "loaded"; };
  const start = () => {
    const scripts = %s.map((src) => Object.assign(document.createElement("script"), { src, async: false }));
    scripts[0].addEventListener("load", () => {
      let started = false;
      window.document$.subscribe(() => { started = true; }).unsubscribe();
      if (started) done();
      else setTimeout(() => { document.dispatchEvent(new Event("DOMContentLoaded")); done(); });
    });
    scripts[scripts.length - 1].addEventListener("load", done);
    document.body.append(...scripts);
  };
  if (document.visibilityState === "hidden") start();
  else requestAnimationFrame(() => setTimeout(start));
}</script>"""

SCRIPT_TAG = re.compile(r'<script src="([^"]+)"></script>\s*')
BUNDLE = re.compile(r"(?:^|/)bundle\.[0-9a-f]+\.min\.js$")


def plain_material(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this build is plain Material (``MHA_PLAIN_MATERIAL=1``; unset, empty or ``0``: the site)."""
    value = environ.get(PLAIN_ENV, "")
    if value not in {"", "0", "1"}:
        raise ValueError(f"{PLAIN_ENV} must be 1 (build plain Material, make perf's baseline) or 0 or unset, got {value!r}")
    return value == "1"


def start_scripts(theme_scripts: str, page_scripts: list[str], plain: bool = False) -> str:
    """Material's ``scripts`` block (``theme_scripts``: its bundle and ``extra_javascript``), then the
    page's ``page_scripts``: as plain tags in plain Material, else all run by :data:`SCRIPT_LOADER`
    after :data:`SEARCH_HOLD_BACK`. ValueError: the bundle is not first, or a script tag has other
    attributes (it would run before the bundle).
    """
    if plain:
        return theme_scripts + "".join(f'<script src="{src}"></script>' for src in page_scripts)
    sources = SCRIPT_TAG.findall(theme_scripts)
    if not sources or not BUNDLE.search(sources[0]):
        raise ValueError(f"Material's bundle is not the first script of its scripts block: found {sources[:1]}; "
                         "the theme's base.html has changed")
    rest = SCRIPT_TAG.sub("", theme_scripts)
    left = re.search(r"<script\b[^>]*>", rest)
    if left:
        raise ValueError(f"a script tag the loader cannot take over (it would run before the bundle): {left.group(0)}")
    return rest.strip() + SEARCH_HOLD_BACK + SCRIPT_LOADER % json.dumps(sources + list(page_scripts))
