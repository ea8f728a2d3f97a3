"""The benchmark: measure and run (torch); schema, claims, tables, report (JSON only); figures (matplotlib)."""
