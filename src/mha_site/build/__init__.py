"""What the site's build does to its pages, step by step: hooks/site.py lists the steps in order,
and each module's docstring says what its step does. Build-time only: nothing here is imported
by the reference, the figures or the page data."""
