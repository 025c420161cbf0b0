"""Where each first-party distribution lives in this repository (for the tests that build their wheels)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = {
    "agentenv-kernel": ROOT / "kernel",
    "agentenv-runtime": ROOT / "runtime",
    "agentenv-testing": ROOT / "testing",
    "agentenv-docker": ROOT / "plugins" / "sandboxes" / "docker",
    "agentenv-store-local": ROOT / "plugins" / "stores" / "local",
    "agentenv-slack": ROOT / "plugins" / "envs" / "slack",
    "agentenv-steps": ROOT / "plugins" / "steps" / "steps",
    "agentenv-agents": ROOT / "plugins" / "agents" / "core",
    "agentenv-hello": ROOT / "plugins" / "bundles" / "hello",
}


def projects(*names: str) -> dict[str, Path]:
    return {name: PROJECTS[name] for name in names}
