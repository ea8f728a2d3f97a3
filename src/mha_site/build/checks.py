"""The build finds its files from any working directory, and stops on a page whose markup would
swallow the rest of it (steps of hooks/site.py).

pymdownx.snippets takes its ``base_path`` from the working directory and mkdocs-jupyter its
``cache_dir``, where MkDocs and mkdocstrings resolve from the config file's folder; and a raw-HTML
component left open (a quiz, the explorer, the live-heads box) takes every later heading into it
while the page still builds. A missing ``--8<--`` file or section stops pymdownx.snippets with a
traceback naming neither the page nor the base path: :func:`snippets_found` names all three first.
A notebook cache entry cut short is dropped (:func:`drop_broken_notebook_cache`).
The other checks of what a page shows sit where the page is read
(images in :mod:`~mha_site.build.page_assets`, formulas in :mod:`~mha_site.build.katex`).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from mha_site.build.html import unclosed_element

log = logging.getLogger("mkdocs.plugins.mha_site")

# Classes of the components the pages write as raw HTML (docs/_includes/); no heading belongs inside one.
COMPONENTS = frozenset({"quiz", "mha-explorer", "live-heads"})


def anchor_paths(config) -> None:
    """Make the snippets' base path and the notebook cache absolute, from the config file's folder."""
    if not config.config_file_path:
        return
    folder = os.path.dirname(os.path.abspath(config.config_file_path))
    snippets = config["mdx_configs"].get("pymdownx.snippets", {})
    if "base_path" in snippets:
        paths = snippets["base_path"]
        paths = [paths] if isinstance(paths, str) else paths
        snippets["base_path"] = [os.path.join(folder, path) for path in paths]  # an absolute path stays as it is
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None:  # its page cache, else a .cache/ folder in whatever folder the build starts from
        jupyter.config["cache_dir"] = os.path.join(folder, jupyter.config["cache_dir"])


def drop_broken_notebook_cache(config) -> list[Path]:
    """Delete, and return, the mkdocs-jupyter cache entries that are not whole (after :func:`anchor_paths`):
    mkdocs-jupyter writes an entry in place and reads it back unchecked, so one cut short (a build killed, a
    full disk) broke every later build with a JSONDecodeError naming the notebook page, not the cache."""
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None or not jupyter.config.get("cache", True):
        return []
    dropped = []
    for entry in sorted(Path(jupyter.config["cache_dir"]).glob("*.json")):
        try:
            cached = json.loads(entry.read_text(encoding="utf-8"))
            whole = isinstance(cached, dict) and isinstance(cached.get("content"), str) and "toc_tokens" in cached
        except (OSError, ValueError):
            whole = False
        if not whole:
            entry.unlink(missing_ok=True)
            log.info("dropped %s: not a whole mkdocs-jupyter cache entry; the notebook page is rendered again", entry)
            dropped.append(entry)
    return dropped


def components_closed(content: str) -> str:
    """``content`` unchanged, or ValueError naming the component left open."""
    problem = unclosed_element(content, COMPONENTS)
    if problem:
        raise ValueError(f"unbalanced HTML (in the page or a file it includes): {problem}")
    return content


def page_snippets_found(markdown: str, config) -> str:
    """:func:`snippets_found` with the site's snippet folders (made absolute by :func:`anchor_paths`)."""
    if "--8<--" not in markdown:  # most pages include nothing
        return markdown
    bases = (config.get("mdx_configs") or {}).get("pymdownx.snippets", {}).get("base_path", ["."])
    bases = [bases] if isinstance(bases, str) else bases
    root = os.path.dirname(os.path.abspath(getattr(config, "config_file_path", None) or "mkdocs.yml"))
    return snippets_found(markdown, [os.path.join(root, base) for base in bases], root)


def snippets_found(markdown: str, base_paths: list[str], root: str = ".", _within: tuple[str, ...] = ()) -> str:
    """``markdown`` unchanged, or ValueError naming the first ``--8<-- "file:section"`` include
    (pymdownx.snippets' own syntax, followed into included files) whose file or section is missing."""
    from pymdownx.snippets import SnippetPreprocessor as Snippets

    for line in markdown.splitlines():
        match = Snippets.RE_ALL_SNIPPETS.match(line)
        if not match or match["escape"] or not match["inline_marker"]:
            continue
        name = match["snippet"][1:-1].strip()
        if name.startswith(("http://", "https://")):
            continue
        path, _lines, section = Snippets.RE_SNIPPET_FILE.match(name).groups()
        found = next((Path(base, path) for base in base_paths if Path(base, path).is_file()), None)
        where = f'snippet "{name}"' + "".join(f" (in {outer})" for outer in reversed(_within))
        if found is None:
            folders = " or ".join(os.path.relpath(base, root) for base in base_paths)
            raise ValueError(f"{where}: no such file in {folders} (pymdownx.snippets base_path)")
        text = found.read_text(encoding="utf-8")
        shown = os.path.relpath(found, root)
        if section:
            section = section[1:]
            starts = (Snippets.RE_SNIPPET_SECTION.match(marker) for marker in text.splitlines())
            if not any(m and m["type"].lower() == "start" and m["name"] == section for m in starts):
                raise ValueError(f"{where}: {shown} has no section '{section}' (no '--8<-- [start:{section}]' line)")
        elif path.endswith(".md") and shown not in _within:  # an included page's own includes
            snippets_found(text, base_paths, root, (*_within, shown))
    return markdown
