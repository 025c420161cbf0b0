"""Entry-point module: the miniwob env and bundle, its steps and its scripted agents, registered by name (the
browser, the pages and playwright load only when a task runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("miniwob", "agentenv_miniwob.env:MiniwobEnv")]


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from pathlib import Path  # not at the top: `agentenv --help` imports this module

    from agentenv.contracts import BundleRef

    folder = Path(__file__).parent / "bundles" / "miniwob"
    return [BundleRef("miniwob", folder, "MiniWoB++: 130 web tasks in a real browser, graded by the page's reward.")]


@hookimpl
def agentenv_register_steps() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [
        ClassRef("miniwob_task", "agentenv_miniwob.steps:MiniwobTask"),
        ClassRef("miniwob_reward", "agentenv_miniwob.steps:MiniwobReward"),
    ]


@hookimpl
def agentenv_register_agent_kinds() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [
        ClassRef("miniwob-solver", "agentenv_miniwob.agents:MiniwobSolver"),
        ClassRef("miniwob-wrong", "agentenv_miniwob.agents:MiniwobWrong"),
    ]
