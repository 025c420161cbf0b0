"""`agentenv up [--host H] [--port P]`: serve the explorer until Ctrl-C.

Loopback binds need no token. Any other bind refuses to start unless a token is asked for (`--token`): it is
made once, kept 0600 in `--token-file`, and printed once, in the URL to open.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from agentenv_explorer.access import AccessError, default_token_file, is_loopback, load_or_make_token


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(prog="agentenv up", description="Serve the explorer: HTTP API and web UI.")
    parse.add_argument("--host", default="127.0.0.1", help="Address to bind (default 127.0.0.1, loopback only).")
    parse.add_argument("--port", type=int, default=8777, help="Port (default 8777; 0 picks a free one).")
    parse.add_argument("--token", action="store_true", help="Require a token (needed for any non-loopback --host).")
    parse.add_argument("--token-file", type=Path, default=None, help="Where the token is kept (0600).")
    return parse


def resolve_token(host: str, wanted: bool, token_file: Path | None) -> tuple[str | None, str | None]:
    """(token or None, a line to print once): AccessError for a non-loopback bind without a token."""
    if not wanted and not is_loopback(host):
        raise AccessError(
            f"--host {host} is not loopback: the explorer would be open to the network. Add --token (a token is made, "
            "kept 0600 and required on every request), or bind 127.0.0.1"
        )
    if not wanted:
        return None, None
    path = token_file or default_token_file()
    token, made = load_or_make_token(path)
    return token, f"token {'made and ' if made else ''}kept in {path} (mode 0600)"


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    try:
        token, note = resolve_token(args.host, args.token, args.token_file)
    except AccessError as exc:
        print(f"agentenv up: {exc}", file=sys.stderr)
        return 2
    from agentenv.config import ConfigError
    from agentenv_runtime import StoreError

    from agentenv_explorer.app import build_app, make_explorer

    try:
        explorer = make_explorer()
    except (ConfigError, StoreError, LookupError, ValueError) as exc:
        print(f"agentenv up: {exc}", file=sys.stderr)
        return 1
    return serve(build_app(explorer, token=token), explorer, args.host, args.port, token, note)


def serve(app: object, explorer: object, host: str, port: int, token: str | None, note: str | None) -> int:
    import signal
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        print(f"agentenv up: cannot bind {host}:{port}: {exc.strerror}; pick another --port", file=sys.stderr)
        return 1
    sock.listen(128)  # connections queue from now on, so the printed URL works at once
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/" + (f"?token={token}" if token else "")
    if note:
        print(note, file=sys.stderr)
    print(f"explorer at {url}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))  # type: ignore[arg-type]
    # uvicorn shuts down on SIGTERM, then raises the signal again with the handler that was there before it: this
    # one turns it into SystemExit, so the `finally` below still cancels the runs started here.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    live = explorer.live  # type: ignore[attr-defined]
    if live is not None:
        live.publish()  # runs started in this project from now on write their events where the explorer reads
    try:
        server.run(sockets=[sock])
    finally:
        if live is not None:
            live.close()
        explorer.launcher.close()  # type: ignore[attr-defined]
    return 0


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
