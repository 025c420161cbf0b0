"""Run a gateway app with uvicorn: in a background thread (tests, sandboxes, benchmarks) or in the foreground."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

STARTUP_TIMEOUT = 30.0


class ServeError(RuntimeError):
    """The server could not start (port in use, bad host, app failed at start-up)."""


def _config(app: Any, host: str, port: int, log_level: str) -> Any:
    """uvicorn's settings; a gateway app's limits bound the connections still sending their request head."""
    import uvicorn
    from agentenv_runtime import server_settings
    from uvicorn.protocols.http.h11_impl import H11Protocol

    limits = getattr(getattr(app, "gateway", None), "limits", None)
    waits = limits.header_waits() if limits is not None else None
    return uvicorn.Config(
        app, host=host, port=port, log_level=log_level, lifespan="on", access_log=False, timeout_graceful_shutdown=5,
        **server_settings(H11Protocol, waits),
    )


def _bound_url(server: Any, host: str) -> str:
    sockets = [sock for srv in server.servers for sock in srv.sockets]
    port = sockets[0].getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


@contextmanager
def serve_in_thread(app: Any, host: str = "127.0.0.1", port: int = 0, *, log_level: str = "warning") -> Iterator[str]:
    """Serve `app` until the block exits; yields the base URL (`port=0` picks a free port)."""
    import uvicorn

    server = uvicorn.Server(_config(app, host, port, log_level))
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run()
        except BaseException as exc:  # uvicorn exits via SystemExit when it cannot bind
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"agentenv-gateway-{host}:{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(5)
            reason = f"{type(failure[0]).__name__}: {failure[0]}" if failure else "see the log above"
            raise ServeError(f"the gateway could not start on {host}:{port} ({reason})")
        time.sleep(0.005)
    try:
        yield _bound_url(server, host)
    finally:
        server.should_exit = True
        thread.join(15)


def serve_forever(app: Any, host: str, port: int, *, log_level: str = "info", on_ready: Any = None) -> None:
    """Serve in the foreground until interrupted; `on_ready(url)` runs once the socket is bound."""
    import asyncio

    import uvicorn

    server = uvicorn.Server(_config(app, host, port, log_level))

    async def main() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started and on_ready is not None:
            on_ready(_bound_url(server, host))
        await task

    asyncio.run(main())
    if not server.started:
        raise ServeError(f"the gateway could not start on {host}:{port}")
