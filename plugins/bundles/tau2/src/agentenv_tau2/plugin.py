"""Entry-point module: the tau2-retail bundle, its grading step and its reference agent, registered by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from pathlib import Path  # not at the top: `agentenv --help` imports this module

    from agentenv.contracts import BundleRef

    folder = Path(__file__).parent / "bundles" / "tau2-retail"
    return [BundleRef("tau2-retail", folder, "τ²-bench retail: 114 tasks graded as τ²-bench grades them.")]


@hookimpl
def agentenv_register_steps() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [
        ClassRef("tau2_grade", "agentenv_tau2.steps:Tau2Grade"),
        ClassRef("tau2_user", "agentenv_tau2.steps:Tau2User"),
    ]


@hookimpl
def agentenv_register_agent_kinds() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("tau2-gold", "agentenv_tau2.agents:GoldAgent")]
