"""The web-desk tests run the real browser: Debian's Chromium (CI installs it with .ci/setup.d/50-chromium.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentenv_browser.driver import BrowserUnavailable, find_chromium


@pytest.fixture(scope="session")
def chromium() -> str:
    try:
        return find_chromium()
    except BrowserUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def bundle() -> Path:
    """The web-desk bundle's folder."""
    return Path(__file__).resolve().parent.parent / "src" / "agentenv_web_desk" / "bundles" / "web-desk"
