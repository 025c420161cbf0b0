"""Debian's Chromium for the miniwob tests (skipped, saying why, where it is missing)."""

from __future__ import annotations

import pytest
from agentenv_browser.api import BrowserUnavailable, find_chromium


@pytest.fixture(scope="session")
def chromium() -> str:
    try:
        return find_chromium()
    except BrowserUnavailable as exc:  # CI installs it (.ci/setup.d/50-chromium.sh)
        pytest.skip(str(exc))
