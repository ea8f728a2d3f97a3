"""The induction-head experiment: training and measurement (torch), report (JSON only), figures (matplotlib)."""

from pathlib import Path

__all__ = ["RESULTS"]

#: The experiment's committed results, relative to the repository root: the one place its path is written.
RESULTS = Path("docs/assets/real-heads/results.json")
