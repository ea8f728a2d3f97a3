"""A static file server for a built site that compresses text with gzip, as any real host does.

``python -m http.server`` sends every file uncompressed, which makes a page look several times
heavier than it is once published; Lighthouse's transfer sizes and timings are only meaningful
against a server that compresses. Bound to 127.0.0.1 only.

    python tests/site/gzip_server.py SITE_DIR [--port 8000]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import os
import threading
from pathlib import Path

# What a static host compresses: text formats. woff2, png and .ipynb-as-download are left alone.
COMPRESSIBLE = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files from ``directory``; text files gzip-compressed when the client accepts it."""

    _cache: dict[tuple[str, float], bytes] = {}
    _lock = threading.Lock()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def end_headers(self) -> None:
        # GitHub Pages sends max-age=600 on every file; do the same so repeat views behave alike.
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_head(self):  # noqa: ANN201 - stdlib signature
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()  # the stdlib's redirect to the slash form
            path = os.path.join(path, "index.html")
        suffix = Path(path).suffix.lower()
        accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if suffix not in COMPRESSIBLE or not accepts_gzip or not os.path.isfile(path):
            return super().send_head()
        stat = os.stat(path)
        key = (path, stat.st_mtime)
        with self._lock:
            body = self._cache.get(key)
            if body is None:
                body = gzip.compress(Path(path).read_bytes(), compresslevel=6, mtime=0)
                self._cache[key] = body
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        self.end_headers()
        return io.BytesIO(body)


def make_server(directory: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """A bound (not yet serving) gzip server over ``directory`` on 127.0.0.1:``port`` (0: any free port)."""
    if not Path(directory).is_dir():
        raise ValueError(f"not a directory: {directory}")
    handler = functools.partial(GzipHandler, directory=str(directory))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    server = make_server(args.directory, args.port)
    print(f"serving {args.directory} with gzip at http://127.0.0.1:{server.server_address[1]}/")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
