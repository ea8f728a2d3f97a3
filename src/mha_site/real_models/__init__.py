"""The "Heads in real models" page: two pretrained models' heads, reproduced by mha_ref and scored.

- :mod:`mha_site.real_models.compute` loads the models (transformers, the ``real-models``
  extra, imported only there), reproduces every attention layer with ``mha_ref``, and
  measures the scores; ``scripts/build_assets.py real-models --recompute`` runs it.
- :mod:`mha_site.real_models.schema` checks a committed ``heads.json`` (JSON only:
  no torch, no transformers), so ``--check`` and the tests run without the models.
"""
