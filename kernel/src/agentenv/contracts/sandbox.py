"""Sandbox providers: where served worlds and agents run (in-process, subprocess, containers, VMs)."""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentenv.contracts.base import Configured
from agentenv.contracts.base import SettingsT as S


class NetworkPolicy(BaseModel):
    """`allow_all`; `allowlist` (only the listed hosts); `loopback` (only the sandbox's own loopback: nothing
    outside it, in or out); `none` (no network at all, not even a loopback). A provider that cannot enforce the
    mode must refuse the spec."""

    mode: Literal["allow_all", "allowlist", "loopback", "none"] = "allow_all"
    allow: list[str] = Field(default_factory=list)


class SandboxSpec(BaseModel):
    """What to create. Resource fields are limits; None means the provider's default."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    mode: Literal["container", "vm"] = "container"
    image: str | None = None
    command: list[str] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cpu: float | None = None
    memory_mb: int | None = None
    disk_mb: int | None = None
    ports: list[int] = Field(default_factory=list)
    ttl_seconds: int | None = None
    network: NetworkPolicy = Field(default_factory=NetworkPolicy)
    labels: dict[str, str] = Field(default_factory=dict)


class ExecResult(BaseModel):
    """A finished command. By convention a command killed for its timeout reports exit code 124."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""


class SpecRefused(Exception):
    """Raised by `SandboxProvider.create` when it cannot honour the spec (a fallback chain moves on)."""


class Sandbox(ABC):
    """One running sandbox. Every sandbox carries the `agentenv.run` label of the run that made it."""

    id: str
    labels: dict[str, str]

    @abstractmethod
    def exec(self, command: list[str], *, timeout: float | None = None) -> ExecResult: ...

    @abstractmethod
    def put_file(self, path: str, data: bytes) -> None: ...

    @abstractmethod
    def get_file(self, path: str) -> bytes: ...

    @abstractmethod
    def url(self, port: int) -> str:
        """A URL on which `port` inside the sandbox is reachable from the caller."""

    @abstractmethod
    def status(self) -> Literal["running", "stopped", "missing"]:
        """`stopped` covers a sandbox past its time to live; `missing` one that was torn down."""

    @abstractmethod
    def teardown(self) -> None:
        """Remove everything this sandbox created; calling it twice is harmless."""


class SandboxProvider(Configured[S], ABC):
    """Creates sandboxes. `available()` lets a fallback chain skip a provider that cannot run here."""

    modes: frozenset[str] = frozenset({"container"})

    def available(self) -> tuple[bool, str]:
        """(usable here, reason when not)."""
        return True, ""

    @abstractmethod
    def create(self, spec: SandboxSpec) -> Sandbox: ...

    @abstractmethod
    def list(self, labels: dict[str, str]) -> list[Sandbox]:
        """Sandboxes of this provider carrying all of `labels` (used to prune a crashed run's leftovers)."""

    def prune(self, labels: dict[str, str]) -> builtins.list[str]:
        """Tear down every sandbox carrying `labels`; returns their ids."""
        found = self.list(labels)
        for sandbox in found:
            sandbox.teardown()
        return [sandbox.id for sandbox in found]
