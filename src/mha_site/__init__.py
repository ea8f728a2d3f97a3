"""mha_site: turns the ``mha_ref`` reference into the site's files: experiments, the benchmark harness,
figures, the numbers pages quote, notebook execution and the write-or-check of every generated file.
It imports ``mha_ref``; ``mha_ref`` never imports it. What the MkDocs build loads (``build``,
``placeholders`` and the JSON-only modules they read) imports neither torch nor matplotlib.
"""
