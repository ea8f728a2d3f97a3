"""The "Heads in real models" page: two pretrained models' heads, reproduced by mha_ref and scored.

- :mod:`~mha_site.real_models.specs`: everything that differs between the models, one spec each.
- :mod:`~mha_site.real_models.document` builds heads.json from a spec with ``measure``, ``ablate``
  and ``views`` (transformers, the ``real-models`` extra, imported only there);
  ``scripts/build_assets.py real-models --recompute`` runs it.
- :mod:`~mha_site.real_models.schema` checks a committed ``heads.json`` (JSON only:
  no torch, no transformers), so ``--check`` and the tests run without the models.
"""
