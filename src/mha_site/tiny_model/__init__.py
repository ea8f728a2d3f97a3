"""The tiny model: :class:`mha_ref.induction.AttentionOnlyTransformer` trained on repeated tokens.

``training`` trains and measures it (torch), ``report`` reads the results into the page's numbers
(JSON only), ``figures`` draws them (matplotlib) and ``export`` ships seed 0 to the browser.
"""

from pathlib import Path

__all__ = ["ASSETS", "RESULTS"]

#: The tiny model's committed files (results, figures, the browser's weights), from the repository root.
ASSETS = Path("docs/assets/tiny-model")
#: Its training results: the one place their path is written.
RESULTS = ASSETS / "results.json"
