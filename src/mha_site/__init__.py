"""Site tooling: turns the ``mha_ref`` reference into the files the lesson site ships."""
