"""mha_site: turns the ``mha_ref`` reference into the site's files.

Experiments (training, ablation, pruning), the benchmark harness and its schema,
figures, the numbers pages quote, notebook execution and the write-or-check of
every generated file. It imports ``mha_ref``; ``mha_ref`` never imports it.
Modules that only read JSON (``bench.schema``, ``bench.report``, ``bench.claims``,
``bench.tables``, ``bench.gpu_section``, ``bench.labels``,
``heads.report``, ``placeholders``, ``files``) import neither torch nor matplotlib,
so the MkDocs build loads neither.
"""
