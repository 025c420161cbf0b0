"""Driving BrowserGym's own MiniWoB environment from our side, for the agreement test and the bench.

BrowserGym runs in a venv of its own (browsergym-core pins playwright 1.44; ours is newer), made by
.ci/setup.d/55-browsergym-miniwob.sh under ~/.cache/agentenv/browsergym (or $AGENTENV_BROWSERGYM_HOME). The
script `browsergym_driver.py.txt` beside this one is what runs there, fed JSON on stdin. Both sides load the
same pages from our loopback server and drive the same Debian Chromium.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from agentenv_browser.api import ID_ATTRIBUTE, MAX_LINES, TREE_SCRIPT

BROWSERGYM_HOME = Path(os.environ.get("AGENTENV_BROWSERGYM_HOME", Path.home() / ".cache" / "agentenv" / "browsergym"))
DRIVER = Path(__file__).with_name("browsergym_driver.py.txt")
"""Python source, kept as text: it imports BrowserGym, which exists only in BrowserGym's venv."""
BOX_SCRIPT = """([attr, id]) => { const e = document.querySelector(`[${attr}="${id}"]`); if (!e) return null;
  const r = e.getBoundingClientRect();
  return {x: Math.round(r.x * 100) / 100, y: Math.round(r.y * 100) / 100,
          width: Math.round(r.width * 100) / 100, height: Math.round(r.height * 100) / 100}; }"""
"""An element's box as `locate` reports it, read on BrowserGym's page."""


def browsergym_python() -> Path | None:
    """BrowserGym's venv interpreter, or None when it is not installed."""
    python = BROWSERGYM_HOME / "venv" / "bin" / "python"
    return python if python.exists() else None


def _chromium_dir(python: Path, chromium: str, root: Path) -> Path:
    """A PLAYWRIGHT_BROWSERS_PATH for BrowserGym's playwright in which its own Chromium is `chromium`: BrowserGym
    launches its chat window with no options, so `executable_path` alone does not reach it."""
    found = subprocess.run(
        [str(python), "-c", "import json, playwright, pathlib; p = pathlib.Path(playwright.__file__).parent; "
         "print(next(b['revision'] for b in json.loads((p / 'driver/package/browsers.json').read_text())['browsers']"
         " if b['name'] == 'chromium'))"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    target = root / f"chromium-{found.stdout.strip()}" / "chrome-linux"
    target.mkdir(parents=True, exist_ok=True)
    (target / "chrome").symlink_to(chromium)
    return root


def run_browsergym(cases: list[dict[str, Any]], pages_url: str, chromium: str, timeout: float = 3600) -> dict[str, Any]:
    """Play `cases` ({id, task, seed, calls}) in BrowserGym's MiniWoB environment; the driver's answer."""
    python = browsergym_python()
    if python is None:
        raise RuntimeError(
            f"BrowserGym is not installed under {BROWSERGYM_HOME}: run .ci/setup.d/55-browsergym-miniwob.sh"
        )
    request = {
        "pages_url": pages_url,
        "chromium": chromium,
        "tree_script": TREE_SCRIPT,
        "box_script": BOX_SCRIPT,
        "id_attribute": ID_ATTRIBUTE,
        "max_lines": MAX_LINES,
        "cases": cases,
    }
    with tempfile.TemporaryDirectory(prefix="agentenv-browsergym-") as scratch:
        browsers = _chromium_dir(python, chromium, Path(scratch))
        done = subprocess.run(
            [str(python), "-I", str(DRIVER)],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "MINIWOB_URL": pages_url, "PLAYWRIGHT_BROWSERS_PATH": str(browsers)},
        )
    if done.returncode != 0:
        raise RuntimeError(f"BrowserGym's driver failed: {done.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
