"""The "Heads in real models" page: two pretrained models' heads, reproduced by ``mha_ref`` and scored.

:mod:`~mha_site.real_models.document` measures each model of :mod:`~mha_site.real_models.specs` into a
heads.json (the ``real-models`` extra); ``schema``, ``build`` and ``report`` read those files as JSON
only, so ``--check``, the site build and the tests run without the models.
"""
