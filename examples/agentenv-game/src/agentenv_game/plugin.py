"""Entry point of agentenv-game: names the env and the bundle, imports neither (keeps `agentenv --help` fast)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef, ClassRef


@hookimpl
def agentenv_register_envs() -> list[ClassRef]:
    from agentenv.contracts import ClassRef

    return [ClassRef("connect4", "agentenv_game.env:ConnectFourEnv")]


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from agentenv.contracts import BundleRef

    folder = Path(__file__).parent / "bundles" / "connect-four"
    return [BundleRef("connect-four", folder, "Win a game of connect-four as red against the scripted yellow bot.")]
