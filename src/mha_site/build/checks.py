"""The build finds its files from any working directory, and stops on a page whose markup would
swallow the rest of it (steps of hooks/site.py).

pymdownx.snippets takes its ``base_path`` from the working directory and mkdocs-jupyter its
``cache_dir``, where MkDocs and mkdocstrings resolve from the config file's folder; and a raw-HTML
component left open (a quiz, the explorer, the live-heads box) takes every later heading into it
while the page still builds. The other checks of what a page shows sit where the page is read
(images in :mod:`~mha_site.build.page_assets`, formulas in :mod:`~mha_site.build.katex`).
"""

from __future__ import annotations

import os

from mha_site.build.html import unclosed_element

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


def components_closed(content: str) -> str:
    """``content`` unchanged, or ValueError naming the component left open."""
    problem = unclosed_element(content, COMPONENTS)
    if problem:
        raise ValueError(f"unbalanced HTML (in the page or a file it includes): {problem}")
    return content
