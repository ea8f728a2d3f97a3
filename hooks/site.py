"""The site's only MkDocs hook: glue. Each event lists, in order, every step the site or a page
goes through; each step is a function of ``mha_site.build`` (or ``mha_site.placeholders``) that
raises ValueError naming what is wrong, which stops the build naming the page.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from mha_site.build import checks, error_page, katex, notebook_page, page_assets
from mha_site.build.course import Course, write_redirects
from mha_site.build.html import name_search_dialog
from mha_site.build.material_internals import start_scripts
from mha_site.placeholders import Values, fill_html, fill_markdown

_course = Course()


@contextlib.contextmanager
def stop_on_error(page: Any = None) -> Iterator[None]:
    """A step's ValueError as MkDocs' build error, prefixed with the page's source path."""
    try:
        yield
    except ValueError as error:
        raise PluginError(f"{page.file.src_uri}: {error}" if page is not None else str(error)) from None


def _numbers(text: str, fill: Callable[..., str], page: Any, config: Any) -> str:
    """``{{ NAMESPACE.KEY }}`` placeholders filled from the committed results (mha_site.placeholders)."""
    return fill(text, Values(Path(config["docs_dir"])), page.file.src_uri) if "{{" in text else text


def on_config(config: Any) -> Any:
    with stop_on_error():
        checks.anchor_paths(config)  # the build finds its files from any working directory
        checks.drop_broken_notebook_cache(config)  # an entry cut short would break every later build
        page_assets.mark_plain(config)  # the site, or the same pages as plain Material
    return config


def on_env(env: Any, config: Any, files: Any) -> Any:  # noqa: ARG001 - MkDocs hook signature
    plain = page_assets.is_plain(config)
    env.filters["mha_start_scripts"] = lambda theme_scripts, page_scripts: start_scripts(theme_scripts, page_scripts, plain)
    return env


def on_nav(nav: Any, config: Any, files: Any) -> Any:  # noqa: ARG001 - MkDocs hook signature
    _course.read_nav(nav)
    return nav


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001
    with stop_on_error(page):
        if page.file.src_uri.endswith(".ipynb"):  # the notebook's JSON: one line, not nbconvert's traceback
            return notebook_page.notebook_readable(markdown, page, config)
        markdown = checks.page_snippets_found(markdown, config)  # one line, not pymdownx's traceback
        return _numbers(markdown, fill_markdown, page, config)


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    """Every step of a page's content, in order."""
    with stop_on_error(page):
        content = checks.components_closed(content)  # first: the page as Markdown left it
        content = katex.render_page(content, page)  # formulas (and the table of contents') to MathML
        if page.file.src_uri.endswith(".ipynb"):
            content = notebook_page.clean_notebook_page(content, page, config, files)
        content = _numbers(content, fill_html, page, config)
        content = page_assets.content_passes(content, page, config, files)  # fallback, tables, images, search
        page.meta[page_assets.META_KEY] = page_assets.page_assets(content, config)  # linked by overrides/main.html
        # Last: it counts the finished words and code (the maths rendered, the fallback in <noscript>).
        return _course.page_content(content, page, files)


def on_post_page(output: str, page: Any, config: Any) -> str:
    with stop_on_error(page):
        return name_search_dialog(output)


def on_post_build(config: Any) -> None:
    with stop_on_error():
        katex.save_cache()
        write_redirects(config)  # before the 404 page, which lists the site's top-level names
        error_page.stand_alone_404(config)
        page_assets.write_tables_css(config)
        _course.check_moved_landed()
