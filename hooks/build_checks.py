"""MkDocs hook: the build finds its files from any working directory, and stops on a page whose
markup would swallow the rest of it.

* ``mkdocs build -f path/to/mkdocs.yml`` from another folder: MkDocs resolves ``docs_dir``,
  ``hooks`` and ``custom_dir`` from the config file's folder, and so does mkdocstrings for its
  ``paths`` and extensions, but pymdownx.snippets takes its ``base_path`` from the working
  directory, and mkdocs-jupyter its ``cache_dir``. ``on_config`` makes them absolute, from the
  config file's folder, so a snippet is found (or reported missing), and the notebook's cache
  kept in the checkout, wherever the build starts.
* A component written as raw HTML in a page (a quiz, the explorer, the live-heads box) that is
  left open takes every later heading and paragraph inside it: the page builds, and its rest
  is hidden in a quiz. ``on_page_content`` fails the build naming the page and the element
  (``mha_site.html.unclosed_element``). Listed first in ``mkdocs.yml``, it reads each page as
  Markdown rendered it, before other hooks rewrite it.

The other checks of what a page shows sit where the page is read: an image that does not
exist, or an SVG without a usable size, in ``hooks/page_assets.py``; a formula KaTeX cannot
render, in ``hooks/katex.py``.
"""

from __future__ import annotations

import os

from mkdocs.exceptions import PluginError

from mha_site.html import unclosed_element

# Classes of the components the pages write as raw HTML (docs/_includes/); no heading belongs inside one.
COMPONENTS = frozenset({"quiz", "mha-explorer", "live-heads"})


def on_config(config):
    if not config.config_file_path:
        return config
    folder = os.path.dirname(os.path.abspath(config.config_file_path))
    snippets = config["mdx_configs"].get("pymdownx.snippets", {})
    if "base_path" in snippets:
        paths = snippets["base_path"]
        paths = [paths] if isinstance(paths, str) else paths
        snippets["base_path"] = [os.path.join(folder, path) for path in paths]  # an absolute path stays as it is
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is not None:  # its page cache, else a .cache/ folder in whatever folder the build starts from
        jupyter.config["cache_dir"] = os.path.join(folder, jupyter.config["cache_dir"])
    return config


def on_page_content(content: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    problem = unclosed_element(content, COMPONENTS)
    if problem:
        raise PluginError(f"{page.file.src_uri}: unbalanced HTML (in the page or a file it includes): {problem}")
    return content
