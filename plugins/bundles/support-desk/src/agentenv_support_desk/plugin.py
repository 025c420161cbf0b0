"""Registers the support-desk bundles (folders inside this package)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef

BUNDLES = {
    "support-refund": "Resolve Dana's refund: the right amount, the ticket closed, the customer told.",
    "living-world": "The clock runs, triggers change the world mid-run, access shifts; the end state is saved.",
    "open-ended": "No grader: the run records the trajectory and the agent's output files.",
    "living-office": "A long weekend: time zones, working hours, a barrier, seeded walk-ins, an nl instruction.",
}


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from pathlib import Path  # not at the top: `agentenv --help` imports this module

    from agentenv.contracts import BundleRef

    root = Path(__file__).parent / "bundles"
    return [BundleRef(name, root / name, description) for name, description in BUNDLES.items()]
