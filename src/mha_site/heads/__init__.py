"""The induction-head experiment: training and measurement (torch), report (JSON only), figures (matplotlib)."""
