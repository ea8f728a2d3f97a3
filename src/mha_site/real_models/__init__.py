"""The "Heads in real models" page: two pretrained models' heads, reproduced by ``mha_ref`` and scored.
Only ``document`` needs the models (the ``real-models`` extra); the rest read the committed heads.json files.
"""
