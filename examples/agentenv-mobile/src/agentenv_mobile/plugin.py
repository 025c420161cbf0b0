"""Entry point of agentenv-mobile: names the env and the bundles, imports neither (keeps `agentenv --help` fast)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef, ClassRef

BUNDLES = {
    "phone-day": "A day on Alex's phone: reschedule the dentist and tell Sam by SMS; a quiet evening, by the screen.",
    "phone-and-slack": "The phone composed with Slack: move the dentist from the office's text, tell the team.",
}


@hookimpl
def agentenv_register_envs() -> list[ClassRef]:
    from agentenv.contracts import ClassRef

    return [ClassRef("phone", "agentenv_mobile.env:PhoneEnv")]


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from agentenv.contracts import BundleRef

    root = Path(__file__).parent / "bundles"
    return [BundleRef(name, root / name, description) for name, description in BUNDLES.items()]
