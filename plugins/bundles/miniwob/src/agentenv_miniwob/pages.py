"""MiniWoB++'s task pages, as the `miniwob` wheel from PyPI ships them, served on a loopback port.

The wheel carries `miniwob/html/`: `miniwob/<task>.html` (one page per task, 130 of them) beside the `core/`
scripts they load. The folder is found without importing the package (its `__init__` registers gymnasium envs).
One quiet HTTP server per process serves it, started on first use and stopped at exit, so a page loads as
`http://127.0.0.1:PORT/miniwob/<task>.html`, as BrowserGym's MINIWOB_URL expects.
"""

from __future__ import annotations

import atexit
import functools
import http.server
import importlib.util
import re
import threading
from pathlib import Path

TASK_FOLDER = "miniwob"
_SERVER: http.server.ThreadingHTTPServer | None = None
_LOCK = threading.Lock()


class PagesMissing(RuntimeError):
    """The `miniwob` wheel is not installed (or has no task pages); the message says how to get it."""


def html_dir() -> Path:
    """The wheel's `html/` folder."""
    spec = importlib.util.find_spec("miniwob")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "html"
        if (folder / TASK_FOLDER).is_dir():
            return folder
    raise PagesMissing(
        "MiniWoB++'s task pages are missing: install the `miniwob` wheel (pip install 'miniwob>=1.1,<2')"
    )


@functools.cache
def task_names() -> tuple[str, ...]:
    """Every task the wheel has a page for, sorted (`click-test`, `drag-box`, …)."""
    return tuple(sorted(page.stem for page in (html_dir() / TASK_FOLDER).glob("*.html")))


def task_title(task: str) -> str:
    """The task page's <title> (e.g. "Click Test Task"), or the task's name when it has none."""
    text = (html_dir() / TASK_FOLDER / f"{task}.html").read_text(encoding="utf-8", errors="replace")
    found = re.search(r"<title>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    return " ".join(found.group(1).split()) if found else task


def unknown_task(task: str) -> str | None:
    """Why `task` is not a MiniWoB task of the installed wheel (with the closest names), or None."""
    import difflib

    names = task_names()
    if task in names:
        return None
    close = difflib.get_close_matches(task, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else f" (the wheel has {len(names)} tasks)"
    return f"{task!r} is not a MiniWoB++ task{hint}"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def pages_url() -> str:
    """The base URL of the task pages (`http://127.0.0.1:PORT/miniwob/`): the process's server, started once."""
    global _SERVER
    with _LOCK:
        if _SERVER is None:
            handler = functools.partial(_Quiet, directory=str(html_dir()))
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, name="agentenv-miniwob-pages", daemon=True).start()
            _SERVER = server
        return f"http://127.0.0.1:{_SERVER.server_address[1]}/{TASK_FOLDER}/"


@atexit.register
def stop_pages() -> None:
    """Stop the process's page server, if it was started."""
    global _SERVER
    with _LOCK:
        server, _SERVER = _SERVER, None
    if server is not None:
        server.shutdown()
        server.server_close()
