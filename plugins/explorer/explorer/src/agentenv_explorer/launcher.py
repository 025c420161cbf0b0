"""Runs started from the explorer: each is an `agentenv run` subprocess, so it records, tears down and can be
cancelled exactly as on the command line (SIGTERM cancels it; the run keeps its record).

The subprocess writes the runtime's event log (`AGENTENV_EVENTS`) into a private folder; the live stream of a
run replays that file from its start and follows it, so a client that connects late still sees every event.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv_explorer.errors import ApiError, bad_request
from agentenv_explorer.live_logs import follow_log

START_FIELDS = {"bundle": str, "task": str, "agent": str, "seed": int, "sandbox": str, "model": str}
MAX_LIVE = 4
"""Runs the explorer may have going at once (each is a process on the machine that serves the UI)."""
START_TIMEOUT_S = 60.0
POLL_S = 0.1


@dataclass
class Launch:
    process: subprocess.Popen[bytes]
    events: Path
    stderr: Path
    run_id: str | None = None
    started: float = field(default_factory=time.time)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self, lines: int = 8) -> str:
        try:
            text = self.stderr.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])


def start_arguments(body: Any) -> dict[str, Any]:
    """The body of `POST /api/runs`, checked field by field (unknown or mistyped fields are a 400)."""
    if not isinstance(body, dict):
        raise bad_request('the body must be a JSON object such as {"bundle": "hello"}')
    unknown = sorted(set(body) - set(START_FIELDS))
    if unknown:
        raise bad_request(f"unknown field {unknown[0]!r} in the body; fields: {', '.join(START_FIELDS)}")
    if not body.get("bundle"):
        raise bad_request('field "bundle" is required: the name of an installed bundle (GET /api/bundles)')
    out: dict[str, Any] = {}
    for name, kind in START_FIELDS.items():
        value = body.get(name)
        if value is None or value == "":
            continue
        if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise bad_request(f'field "{name}" must be a whole number, got {value!r}')
        if kind is str and not isinstance(value, str):
            raise bad_request(f'field "{name}" must be a string, got {value!r}')
        if isinstance(value, str) and (value.startswith("-") or "\x00" in value or "\n" in value):
            raise bad_request(f'field "{name}" = {value!r} is not a name (it may not start with "-")')
        out[name] = value
    return out


def command(arguments: Mapping[str, Any]) -> list[str]:
    """`python -m agentenv run BUNDLE [--task T] [--agent=A] …`: values as `--opt=value`, never separate words."""
    argv = [sys.executable, "-m", "agentenv", "run", str(arguments["bundle"])]
    for name in ("task", "agent", "seed", "sandbox", "model"):
        if name in arguments:
            argv.append(f"--{name}={arguments[name]}")
    return [*argv, "--json"]


class Launcher:
    def __init__(self, workdir: Path | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.workdir = workdir or Path.cwd()
        self.environ = dict(os.environ if environ is None else environ)
        """The runs' environment (the explorer's own by default: the same config and plugin filters)."""
        self.folder = Path(tempfile.mkdtemp(prefix="agentenv-explorer-"))  # 0700: only this user reads the logs
        self.launches: dict[str, Launch] = {}

    async def start(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if sum(launch.alive() for launch in self.launches.values()) >= MAX_LIVE:
            raise ApiError(429, f"{MAX_LIVE} runs started here are still going; wait for one or cancel one")
        number = len(self.launches) + 1
        events, stderr = self.folder / f"{number}.events.jsonl", self.folder / f"{number}.stderr"
        events.touch()
        env = {**self.environ, "AGENTENV_EVENTS": str(events)}
        with stderr.open("wb") as err:
            process = subprocess.Popen(
                command(arguments), cwd=self.workdir, env=env, stdout=subprocess.DEVNULL, stderr=err
            )
        launch = Launch(process, events, stderr)
        deadline = time.monotonic() + START_TIMEOUT_S
        while launch.run_id is None:
            launch.run_id = _first_run_id(events)
            if launch.run_id is not None:
                break
            if not launch.alive() or time.monotonic() > deadline:
                if launch.alive():
                    launch.process.terminate()
                await asyncio.to_thread(launch.process.wait)
                why = launch.stderr_tail() or f"exit status {launch.process.returncode}"
                raise ApiError(422, f"the run did not start: {why}")
            await asyncio.sleep(POLL_S)
        self.launches[launch.run_id] = launch
        return {"run": launch.run_id, "pid": process.pid, "events": f"/api/runs/{launch.run_id}/events"}

    async def cancel(self, run_id: str, record: Mapping[str, Any]) -> dict[str, Any]:
        launch = self.launches.get(str(record.get("id")))
        if record.get("status") != "running":
            raise ApiError(409, f"run {record.get('id')} is not running (status {record.get('status')})")
        if launch is None or not launch.alive():
            who = record.get("owner") or {}
            raise ApiError(
                409,
                f"run {record.get('id')} was not started by this explorer (pid {who.get('pid')} on "
                f"{who.get('host')}); stop it where it runs (Ctrl-C)",
            )
        launch.process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(asyncio.to_thread(launch.process.wait), 60)
        except TimeoutError:
            launch.process.kill()
            code = await asyncio.to_thread(launch.process.wait)
        return {"run": record.get("id"), "cancelled": True, "exit_code": code}

    async def follow(self, run_id: str) -> AsyncIterator[dict[str, Any]]:
        """The run's events from the first, then as they come, until the run finishes or its process ends."""
        launch = self.launches[run_id]
        async for event in follow_log(launch.events, launch.alive):
            yield event
            if event.get("event") == "run_finished":
                return
        yield {"event": "process_exited", "exit_code": launch.process.returncode}

    def close(self) -> None:
        """Cancel what is still running (each run tears down and records), wait for it, and remove the event logs
        (what the runs recorded is in the stores)."""
        for launch in self.launches.values():
            if launch.alive():
                launch.process.send_signal(signal.SIGTERM)
        for launch in self.launches.values():
            try:
                launch.process.wait(60)
            except subprocess.TimeoutExpired:
                launch.process.kill()
                launch.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _first_run_id(events: Path) -> str | None:
    with events.open("rb") as source:
        for line in source:
            if not line.endswith(b"\n"):
                return None
            event = json.loads(line)
            if event.get("event") == "run_started":
                return str(event["run"]["id"])
    return None
