"""One Chromium per process, shared by every browser env in it; each env gets its own browser context.

Launching Chromium costs hundreds of milliseconds and about 200 MiB; a context costs a few milliseconds and
tens of MiB, and isolates cookies, storage and history. So episodes (resets, forks) get fresh contexts on one
browser. Playwright's objects belong to the event loop that made them, and world calls come from any thread
(the gateway's world thread, a trainer's workers), so the browser lives on a private loop thread and callers hand
it coroutines, as the MCP client does for upstream servers.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import shutil
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
CHROMIUM_VAR = "AGENTENV_CHROMIUM"
CANDIDATES = ("/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium")
"""Debian's real binaries (not the /usr/bin/chromium shell wrapper, which adds flags and noise); the headless
shell first: half the memory per page and a faster launch."""
CALL_TIMEOUT = 60.0
CLOSE_AFTER = 2.0
"""Seconds after which a context an episode dropped is closed when no next episode has started by then."""
SPARE_CONTEXTS = True
"""Make each episode's context ahead of time (see `BrowserHost.make_spare`); the bench turns it off for its baseline."""


class BrowserUnavailable(RuntimeError):
    """No Chromium to drive; the message says how to get one."""


def find_chromium(configured: str | None = None) -> str:
    """The Chromium executable: the setting, then $AGENTENV_CHROMIUM, then Debian's binaries, then PATH."""
    for candidate in (configured, os.environ.get(CHROMIUM_VAR)):
        if candidate:
            if not os.access(candidate, os.X_OK):
                raise BrowserUnavailable(f"executable_path {candidate!r}: not an executable file")
            return candidate
    for candidate in CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    raise BrowserUnavailable(
        "no Chromium found; install Debian's: `apt-get install --no-install-recommends chromium`, or set "
        f"${CHROMIUM_VAR} / the env setting executable_path to a Chromium binary"
    )


class BrowserHost:
    """A Chromium on its own event-loop thread: launched here, or reached over CDP where it runs elsewhere.

    `debug_port` (0: a free one) opens Chromium's DevTools endpoint on loopback, so an outside client can attach
    with `connect_over_cdp(host.cdp_url)` and see the pages episodes drive. `connect` is the DevTools endpoint of a
    browser that runs elsewhere (another process, the agent's sandbox): nothing is launched, contexts are made in
    that browser, and closing only disconnects."""

    def __init__(
        self,
        executable: str | None,
        headless: bool = True,
        *,
        debug_port: int | None = None,
        connect: str | None = None,
    ) -> None:
        self.executable, self.headless = executable, headless
        self.cdp_url: str | None = connect
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="agentenv-browser", daemon=True)
        self._thread.start()
        self._playwright: Any = None
        self.browser: Any = None
        self._spares: dict[tuple[int, int], asyncio.Task[tuple[Any, Any]]] = {}
        """Viewport → a context and page being made (or made) ahead of the next episode that asks for one."""
        self._dropped: list[Any] = []
        """Contexts episodes are done with, closed soon (see `discard`)."""
        if connect is None and debug_port is not None:
            port = debug_port or free_port()
            self.cdp_url, self._args = f"http://127.0.0.1:{port}", [f"--remote-debugging-port={port}"]
        else:
            self._args = []
        try:
            self.run(self._launch)
        except BaseException:
            self.close()
            raise

    async def _launch(self) -> None:
        from playwright.async_api import async_playwright

        self._playwright = await async_playwright().start()
        chromium = self._playwright.chromium
        if self.executable is None:
            assert self.cdp_url is not None
            self.browser = await chromium.connect_over_cdp(self.cdp_url)
        else:
            self.browser = await chromium.launch(
                executable_path=self.executable, headless=self.headless, args=self._args
            )

    async def fresh_page(self, width: int, height: int) -> tuple[Any, Any]:
        """A new, never-used context and its page (call on the browser's loop): the one made ahead if there is
        one, else one made now. Made ahead or now, it is just as fresh (no cookies, storage or history).

        It does not start the next one: `make_spare` does, once the episode's first call is done (see there)."""
        spare = self._spares.pop((width, height), None)
        if spare is not None:
            with contextlib.suppress(Exception):  # a spare that failed (the browser restarted): make one now
                return await spare
        return await self._new_page(width, height)

    def make_spare(self, width: int, height: int) -> None:
        """Start making the context and page the next episode of this viewport will get, unless one is under way
        (call on the browser's loop). Callers do it after the first call of an episode, not when it starts: making
        a context spawns a renderer, and on a small machine that work, overlapping an episode's first call, made
        a reset several times slower (measured in bench/browser_bench.py)."""
        key = (width, height)
        if SPARE_CONTEXTS and key not in self._spares:
            task = asyncio.ensure_future(self._new_page(width, height))
            task.add_done_callback(_retrieve)
            self._spares[key] = task
        self._close_dropped()  # the contexts earlier episodes left, now that this one's first call is done

    def drop_spares(self) -> None:
        """Close the contexts made ahead (a bench's baseline, or a caller that wants no idle context)."""

        async def drop() -> None:
            spares, self._spares = list(self._spares.values()), {}
            for spare in spares:
                context, _ = await spare
                await context.close()

        self.run(drop)

    async def _new_page(self, width: int, height: int) -> tuple[Any, Any]:
        context = await self.browser.new_context(viewport={"width": width, "height": height})
        page = await context.new_page()
        await page.evaluate("() => document.readyState")  # the page's script context exists before it is handed out
        return context, page

    def discard(self, context: Any) -> None:
        """Close a context an episode is done with, later: after the next episode's first call (`make_spare`), or
        after `CLOSE_AFTER` seconds if none comes. Closing tears down a renderer, and on a small machine that work,
        overlapping the next episode's first call (an RL reset drops one context and opens the next at once), made
        the reset several times slower. Callable from any thread."""

        def queue() -> None:
            self._dropped.append(context)
            self._loop.call_later(CLOSE_AFTER, self._close_dropped)

        if self._loop.is_running():
            self._loop.call_soon_threadsafe(queue)

    def _close_dropped(self) -> None:
        """Start closing the contexts `discard` queued (on the browser's loop)."""
        dropped, self._dropped = self._dropped, []
        for context in dropped:
            task = asyncio.ensure_future(context.close())
            task.add_done_callback(_retrieve)

    def run(self, func: Callable[[], Awaitable[T]], timeout: float = CALL_TIMEOUT) -> T:
        """Run `func()` on the browser's loop and wait for its result (from any thread but that loop's own)."""

        async def call() -> T:
            return await func()

        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(call(), self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the browser did not answer within {timeout:.0f}s") from None

    def close(self) -> None:
        async def stop() -> None:
            for spare in self._spares.values():
                spare.cancel()
            if self.browser is not None:
                await self.browser.close()
            if self._playwright is not None:
                await self._playwright.stop()

        if self._loop.is_running():
            with contextlib.suppress(Exception):  # closing anyway: the process is going away
                asyncio.run_coroutine_threadsafe(stop(), self._loop).result(15)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(15)


_HOSTS: dict[tuple[str | None, bool, int | None, str | None], BrowserHost] = {}
_LOCK = threading.Lock()


def shared_host(
    executable: str | None, headless: bool = True, *, debug_port: int | None = None, connect: str | None = None
) -> BrowserHost:
    """The process's browser for this executable and mode (or this remote endpoint), launched on first use."""
    key = (executable, headless, debug_port, connect)
    with _LOCK:
        host = _HOSTS.get(key)
        if host is None:
            host = _HOSTS[key] = BrowserHost(executable, headless, debug_port=debug_port, connect=connect)
        return host


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@atexit.register
def close_hosts() -> None:
    """Stop every browser this process launched (also at exit, so no Chromium outlives its process)."""
    with _LOCK:
        hosts = list(_HOSTS.values())
        _HOSTS.clear()
    for host in hosts:
        host.close()


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read a spare's outcome so a spare that failed (the browser went away first) is not reported as unread."""
    if not task.cancelled():
        task.exception()
