"""Typed registries: a `Kind` names one kind of contribution, and its type parameter is what a lookup returns.

`host.get(STEPS, "deploy_env")` is a `type[Step[Any]]` to a type checker, so plugins never cast. The kinds
themselves are in `agentenv.contracts.kinds`; `Registries` is what a step sees of the plugin host.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Kind(Generic[T]):
    """A kind of contribution: `agentenv_register_<name>` fills its registry; `base` ("module:Class") is the
    class every contribution must subclass (empty for bundles and CLI commands, checked by shape)."""

    __slots__ = ("base", "name")

    def __init__(self, name: str, base: str = "") -> None:
        self.name, self.base = name, base

    @property
    def hook(self) -> str:
        return f"agentenv_register_{self.name}"

    @property
    def label(self) -> str:
        """`sandbox provider` for `sandbox_providers`: how messages name one contribution."""
        return self.name[:-1].replace("_", " ")

    def __repr__(self) -> str:
        return f"Kind({self.name!r})"


class Registered(Protocol[T_co]):
    """One registered contribution: its name, the plugin and distribution that gave it, the object itself."""

    @property
    def name(self) -> str: ...

    @property
    def plugin(self) -> str: ...

    @property
    def dist(self) -> str: ...

    @property
    def obj(self) -> T_co: ...


class Registries(Protocol):
    """Lookups among installed contributions (implemented by `agentenv.plugins.host.PluginHost`)."""

    def registry(self, kind: Kind[T]) -> Mapping[str, Registered[T]]: ...

    def usable(self, kind: Kind[T]) -> Mapping[str, Registered[T]]: ...

    def get(self, kind: Kind[T], name: str) -> T: ...
