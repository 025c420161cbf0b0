"""A small site on a loopback HTTP server, and the browser env on Debian's Chromium."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_browser.driver import BrowserUnavailable, find_chromium

SITE = Path(__file__).with_name("site")


@pytest.fixture(scope="session")
def chromium() -> str:
    try:
        return find_chromium()
    except BrowserUnavailable as exc:  # CI installs it (.ci/setup.d/41-chromium.sh)
        pytest.skip(str(exc))


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """The base URL of `site/` served on a free loopback port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
