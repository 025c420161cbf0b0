"""Test helpers shared by the harness kinds' tests: the support desk world, its scripts, process checks.

Importable by tests only (nothing at run time uses it); it imports the runtime and the stand-in lazily.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

from agentenv_harness.process import descendants

SUPPORT_ROLES = {"billing_lead": {"tools": ["*"]}, "support": {"tools": ["*"], "deny": ["issue_refund"]}}
PROMPT = "Ticket TCK-9001 from Dana Kim (dana.kim@example.com) is waiting. Resolve it following Acme's policy."


def script(name: str) -> Path:
    """A packaged stand-in script: `support-refund-solve` or `support-refund-wrong`."""
    return Path(str(files("agentenv_harness") / "scripts" / f"{name}.toml"))


def support_world() -> Any:
    from agentenv_runtime import build_world

    return build_world(["helpdesk", "email", "slack"], artifacts=["acme"], roles=SUPPORT_ROLES)


def refunded_cents(world: Any) -> int:
    """Cents refunded on Dana's order ORD-5001 (Acme's data holds refunds of other orders)."""
    rows = world.env("helpdesk").query(
        "SELECT COALESCE(SUM(amount_cents), 0) AS c FROM refunds WHERE order_id = ?", ("ORD-5001",)
    )
    return int(rows[0]["c"])


def tool_calls(world: Any) -> list[tuple[str, str, str | None]]:
    """(tool, role, error code) of every tool call the world recorded."""
    return [
        (event["tool"], event["role"], (event.get("error") or {}).get("code"))
        for event in world.trajectory.events
        if event["kind"] == "tool_call"
    ]


def living(binary: Path) -> list[int]:
    """Processes of this test process's tree running `binary` (0 expected once an agent finished)."""
    found = []
    for pid in descendants(os.getpid()):
        try:
            if Path(f"/proc/{pid}/exe").resolve() == binary.resolve():
                found.append(pid)
        except OSError:
            continue
    return found


def write_config(tmp_path: Path, extra: str = "") -> Path:
    """`tmp_path/config.toml`: a private store under `tmp_path`, then `extra` (more TOML tables)."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{tmp_path / "records.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{tmp_path / "objects"}"\n{extra}'
    )
    return config


def run_agentenv(tmp_path: Path, *args: str, timeout: float = 300, config: str = "") -> tuple[int, Any, str]:
    """`agentenv ARGS --json` in `tmp_path` with a private store (and `config`, more TOML, e.g. an
    `[agents.claude-code]` table); (exit code, parsed JSON, stderr)."""
    path = tmp_path / "config.toml"
    if config or not path.exists():  # a later command of the same test keeps the first one's config
        write_config(tmp_path, config)
    env = {"AGENTENV_CONFIG": str(path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", *args, "--json"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=timeout,
    )  # fmt: skip
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        data = done.stdout
    return done.returncode, data, done.stderr


def stored_files(tmp_path: Path, pattern: str) -> list[Path]:
    """Files the run stored in its object store (`run_agentenv`'s), matching a glob."""
    return sorted((tmp_path / "objects").rglob(pattern))
