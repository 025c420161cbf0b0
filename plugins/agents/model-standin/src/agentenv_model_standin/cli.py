"""`agentenv model stand-in`: serve a scripted model on loopback until Ctrl-C.

Prints the URLs to give a client, then one line per request, so a user can watch a harness talk to it.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Annotated

import typer
from agentenv import fail

from agentenv_model_standin.script import ScriptError
from agentenv_model_standin.server import StandInModel

app = typer.Typer(add_completion=False, help="Model endpoints for offline use.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Model endpoints for offline use."""


@app.command("stand-in")
def stand_in(
    script: Annotated[Path, typer.Option("--script", help="The turns to serve: a .toml or .json file.")],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 picks a free one).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Address to bind; loopback unless you mean otherwise.")] = (
        "127.0.0.1"
    ),
) -> None:
    """Serve Anthropic Messages, OpenAI Responses and Chat Completions from a script of turns."""
    try:
        model = StandInModel(script, host=host, port=port)
    except ScriptError as exc:
        fail(str(exc))
    try:
        model.start()
    except OSError as exc:
        fail(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror}); pick another port or 0")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    typer.echo(f"stand-in model on {model.url} ({len(model.script.turns)} turns from {script})")
    typer.echo(f"  Anthropic: ANTHROPIC_BASE_URL={model.url}")
    typer.echo(f"  OpenAI:    base_url = {model.openai_url}")
    shown = 0
    try:
        while not stop.is_set():
            for request in model.requests[shown:]:
                turn = "" if request.turn is None else f" turn {request.turn + 1}"
                typer.echo(
                    f"{request.method} {request.path} -> {request.status}{turn}"
                    + (f" ({request.error[:200]})" if request.error else "")
                )
                shown += 1
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        model.stop()
