"""Modules of the older agentenv API that are gone, and where their names live now: a plugin built against them
gets a fix that names the move and the versions to use, instead of a bare `No module named 'agentenv.env'`."""

from __future__ import annotations

from agentenv import __version__

RUNTIME = "agentenv_runtime and declare agentenv-runtime>=0.1,<0.2"
MOVED = {  # old top module -> where its public names are now
    "agentenv.env": f"Env, tool, ToolError, Artifact from {RUNTIME}",
    "agentenv.world": f"World, WorldError, build_world, WorldToolAccess from {RUNTIME}",
    "agentenv.engine": f"TaskRunner, RunContext, Records, TaskError from {RUNTIME}",
    "agentenv.sandboxes": f"make_provider, create_in_chain, NoSandbox from {RUNTIME}",
    "agentenv.builtin": f"the built-in trigger kinds and run commands from {RUNTIME}",
    "agentenv.testing": "the conformance kits from agentenv_testing and declare agentenv-testing>=0.1,<0.2",
    "agentenv.contracts.runner": f"RolloutRunner from {RUNTIME}",
}


def moved_fix(missing: str | None) -> str | None:
    """The fix for importing `missing` when it is (inside) a module the older API had, else None."""
    old = next((m for m in MOVED if missing == m or (missing or "").startswith(f"{m}.")), None)
    if old is None:
        return None
    return f"{old} is not in agentenv-kernel {__version__} (an older agentenv API); import {MOVED[old]}"
