"""A site built without an address (no ``site_url``, as ``make build`` and
``mkdocs gh-deploy`` do) works under any sub-path, its 404 page included.

The 404 page is served at whatever address was missing, at any depth, so no relative link
reaches the site's files from it, and MkDocs links them from the host's root (``/assets/...``):
under ``https://host/mha-lesson/`` it loaded no stylesheet. So :func:`stand_alone_404` writes
its stylesheets and icon into it, drops its scripts (Material's drawer is CSS alone), points
its links through a ``<base>`` found from the address (:data:`ROOT_SCRIPT`), and drops the
sitemap, whose entries must be absolute. With ``MHA_SITE_URL`` set nothing changes.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from mha_site.files import write_atomic

LINK_TAG = re.compile(r'<link\b[^>]*\shref="/([^"]*)"[^>]*>')
SCRIPT_FILE = re.compile(r'<script\b[^>]*\ssrc="[^"]*"[^>]*></script>')
ROOT_LINK = re.compile(r'(\shref)="/(?!/)')
SOURCE_MAP = re.compile(r"/\*# sourceMappingURL=[^*]*\*/")
HEAD = "<head>"
# Material's inline start-up script keys what it stores (the reader's light/dark choice) by the
# site's root; on this page that is the guessed root, not the host's.
MATERIAL_SCOPE = 'new URL("/",location)'

# The site's root is one of the folders the address lies in. The script guesses it at once, so the
# links work from the first paint: the address before the first of the site's top-level names (a
# stale link into api/), else the folder of the missing page's last part (a mistyped name). That
# guess is wrong at an address two deep that names nothing of the site, so the script then asks
# the server for each folder's 404.html (this page's own file), the guess first, then from the
# deepest up, and stops at the first: the host serves the innermost site's 404 page, so no request
# goes above this site's root. HEAD requests to the page's own origin; moving <base> mends every link.
ROOT_SCRIPT = """<script>{
  const names = %s;
  const parts = location.pathname.split("/");
  const folder = (end) => parts.slice(0, end).join("/") + "/";
  const deepest = Math.max(1, parts.length - (parts[parts.length - 1] === "" ? 2 : 1));
  let guess = parts.findIndex((part, i) => i > 0 && names.includes(part));
  if (guess < 0) guess = deepest;
  window.mhaSiteRoot = folder(guess);
  document.write(`<base href="${window.mhaSiteRoot}">`);
  const base = document.querySelector("base");
  const order = [guess, ...Array.from({ length: deepest }, (_, i) => deepest - i).filter((end) => end !== guess)];
  window.mhaSiteRootFound = (async () => {
    for (const end of order) {
      // The (empty) body is read, or Chromium reports the request aborted.
      const ok = await fetch(folder(end) + "404.html", { method: "HEAD" })
        .then((r) => r.arrayBuffer().then(() => r.ok)).catch(() => false);
      if (ok) return (base.href = window.mhaSiteRoot = folder(end));
    }
    return window.mhaSiteRoot;
  })();
}</script>"""
# What marks a page this step has already made stand alone: a second pass over it (a second
# build into the same folder) would add its script twice.
DONE = "window.mhaSiteRootFound"
# Without Material's scripts its search cannot run: its button would do nothing. (The light/dark
# switch is the site's own, inline in the page, so it works here too.)
NO_SEARCH = "<style>.md-search, .md-header__button[for=__search] { display: none !important; }</style>"


def inlined(tag: str, path: str, site_dir: Path) -> str:
    """The ``<link>`` ``tag`` for site file ``path``, standing alone: a stylesheet as ``<style>``,
    an icon as a data URL; anything else (a preload) is dropped."""
    file = site_dir / path
    if not file.is_file():
        raise ValueError(f"404.html links {path}, which the build did not write")
    if 'rel="stylesheet"' in tag:
        return f"<style>{SOURCE_MAP.sub('', file.read_text(encoding='utf-8'))}</style>"
    if 'rel="icon"' in tag:
        data = base64.b64encode(file.read_bytes()).decode("ascii")
        return tag.replace(f'href="/{path}"', f'href="data:image/png;base64,{data}"')
    return ""


def standalone_error_page(html: str, site_dir: Path, names: list[str]) -> str:
    """``html`` (a 404 page linked from ``/``) standing alone (see the module); a second pass changes nothing."""
    if DONE in html:
        return html
    if HEAD not in html:
        raise ValueError("404.html: expected a <head>; mha_site.build.error_page needs updating")
    html = LINK_TAG.sub(lambda match: inlined(match.group(0), match.group(1), site_dir), html)
    html = SCRIPT_FILE.sub("", html)
    html = ROOT_LINK.sub(r'\1="', html).replace(MATERIAL_SCOPE, "new URL(window.mhaSiteRoot,location)")
    return html.replace(HEAD, HEAD + ROOT_SCRIPT % json.dumps(names) + NO_SEARCH, 1)


def stand_alone_404(config) -> None:
    """Without ``site_url``: drop the sitemap and make 404.html stand alone (see the module)."""
    if config.site_url:
        return
    site = Path(config.site_dir)
    for sitemap in ("sitemap.xml", "sitemap.xml.gz"):
        (site / sitemap).unlink(missing_ok=True)
    error_page = site / "404.html"
    if error_page.is_file():
        html = error_page.read_text(encoding="utf-8")
        names = sorted(path.name for path in site.iterdir())  # the site's top-level names: 404.html, api, ...
        write_atomic(error_page, standalone_error_page(html, site, names))
