"""What the site's build does to its pages, step by step (hooks/site.py lists the steps in order).

Build-time only: nothing here is imported by the reference, the figures or the page data.

* ``checks``: paths from any working directory; a component left open fails the build.
* ``katex``: every formula to MathML at build time.
* ``notebook_page``: the notebook's page as the site's own HTML.
* ``page_assets``: each page's own CSS and JS, sized lazy images, boxed tables, focusable scroll
  regions, what search leaves out; ``material_internals``, ``tables``, ``code_tokens``: its parts.
* ``course``, ``reading``: each page's place in the course and its reading time; moved ids.
* ``error_page``: a 404 page that works under any sub-path.
* ``griffe_rst``: the reference's reST docstrings as Markdown for mkdocstrings.
* ``html``: small HTML helpers, and the one repair of Material's markup.
"""
