"""MkDocs hook: a site built without an address (no ``site_url``, as ``make build`` and
``mkdocs gh-deploy`` do) works under any sub-path, its 404 page included.

Every page links its files relatively, so it works wherever it is put, but the 404 page is
served at whatever address was missing, so MkDocs links its files from the host's root
(``/assets/...``): under ``https://host/mha-lesson/`` it loaded no stylesheet. Without an
address this hook makes the 404 page's links relative to a ``<base>`` that a small script
finds from the address it is shown at (:func:`error_page_root_script`), and leaves out the
sitemap, whose entries must be absolute addresses. With ``MHA_SITE_URL`` set (the Pages
workflow, the tests) MkDocs' own absolute links are right and nothing changes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

from mha_site.files import write_atomic

ROOT_LINK = re.compile(r'(\s(?:href|src))="/(?!/)')
# Tags that make the browser fetch: its preload scanner reads them ahead of the parser,
# before a script could set <base>, so they are written by script after it.
FETCHING_TAG = re.compile(r'<link\b[^>]*\shref="[^"]*"[^>]*>|<script\b[^>]*\ssrc="[^"]*"[^>]*></script>')
CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)
HEAD = "<head>"

# The site's root is the part of the address before the first of the site's own top-level
# names (a stale link into api/ or assets/), else the folder that holds the missing page's
# last part (a mistyped page name). It runs before anything in <head> asks for a file.
ROOT_SCRIPT = """<script>{
  const names = %s;
  const parts = location.pathname.split("/");
  let end = parts.findIndex((part, i) => i > 0 && names.includes(part));
  if (end < 0) end = Math.max(1, parts.length - (parts[parts.length - 1] === "" ? 2 : 1));
  window.mhaSiteRoot = parts.slice(0, end).join("/") + "/";
  document.write(`<base href="${window.mhaSiteRoot}">`);
}</script>"""
# Material reads its base address from __config against the page's own address, not <base>.
CONFIG_BASE_SCRIPT = """<script>{
  const config = document.getElementById("__config");
  config.textContent = JSON.stringify({ ...JSON.parse(config.textContent), base: window.mhaSiteRoot });
}</script>"""


def top_level_names(site_dir: Path) -> list[str]:
    """The names directly under the built site's root, sorted (``404.html``, ``api``, ...)."""
    return sorted(path.name for path in site_dir.iterdir())


def written_by_script(tag: str) -> str:
    r"""An inline script that writes ``tag`` where it stands.

    >>> print(written_by_script('<script src="b.js"></script>'))
    <script>document.write("<script src=\"b.js\"><\/script>")</script>
    """
    # "<\/": the string's own "</script>" would end the script that writes it.
    return "<script>document.write(%s)</script>" % json.dumps(tag).replace("</", "<\\/")


def relocatable_error_page(html: str, names: list[str]) -> str:
    r"""``html`` (a 404 page linked from ``/``) with its links relative to a ``<base>`` that a
    script sets to the site's root, found from the address the page is shown at.

    >>> page = ('<html><head><link rel="stylesheet" href="/assets/a.css"></head><body><a href="/api/">API</a>'
    ...         '<script id="__config" type="application/json">{"base": "/", "search": "/w.js"}</script>'
    ...         '<script src="/b.js"></script></body></html>')
    >>> out = relocatable_error_page(page, ["api", "assets"])
    >>> out.count("<link") == out.count('document.write("<link'), 'href="api/"' in out, '"/' in out.split("__config")[1]
    (True, True, False)
    >>> print(out[out.index("<link") - 16:out.index("a.css") + 10])
    document.write("<link rel=\"stylesheet\" href=\"assets/a.css\">")
    >>> out.index("<base href") < out.index("a.css") < out.index("b.js"), out.count("mhaSiteRoot")
    (True, 3)
    """
    config = CONFIG.search(html)
    if HEAD not in html or not config:
        raise PluginError("404.html: expected a <head> and Material's __config script; hooks/error_page.py needs updating")
    settings = {key: value.lstrip("/") if isinstance(value, str) and value.startswith("/") else value
                for key, value in json.loads(config.group(2)).items()}
    html = html[: config.start(2)] + json.dumps(settings) + html[config.end(2):]
    html = ROOT_LINK.sub(r'\1="', html)
    html = FETCHING_TAG.sub(lambda tag: written_by_script(tag.group(0)), html)
    html = html.replace(HEAD, HEAD + ROOT_SCRIPT % json.dumps(names), 1)
    return CONFIG.sub(lambda match: match.group(0) + CONFIG_BASE_SCRIPT, html, count=1)


def on_post_build(config) -> None:
    if config.site_url:
        return
    site = Path(config.site_dir)
    error_page = site / "404.html"
    if error_page.is_file():
        html = error_page.read_text(encoding="utf-8")
        write_atomic(error_page, relocatable_error_page(html, top_level_names(site)).encode("utf-8"))
    for sitemap in ("sitemap.xml", "sitemap.xml.gz"):
        (site / sitemap).unlink(missing_ok=True)
