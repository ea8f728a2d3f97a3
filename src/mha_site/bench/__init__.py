"""The benchmark: measure (torch), run the sweeps (torch), schema and report (JSON only), figures (matplotlib)."""
