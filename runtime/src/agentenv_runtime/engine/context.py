"""The run context a step sees (implements `agentenv.contracts.StepContext`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agentenv import PluginHost
from agentenv.config import Config
from agentenv.contracts import ObjectStore, StepFailed

R = TypeVar("R")
CURRENT_STEP: ContextVar[str] = ContextVar("agentenv_current_step", default="")


@dataclass
class RunContext:
    run_id: str
    seed: int
    task_name: str
    task_file: Path
    bundle_dir: Path | None
    config: Config
    host: PluginHost
    objects: ObjectStore
    overrides: dict[str, Any] = field(default_factory=dict)
    """Run-level choices from the command line (`agent`, `model`), read by the steps they concern."""
    artifact_pins: dict[str, str] = field(default_factory=dict)
    """`env/name` → sha256 (or prefix) the task pinned; steps that load artifacts must check them."""
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)
    teardowns: list[tuple[str, Callable[[], Any]]] = field(default_factory=list)
    verbose: bool = False
    logger: Callable[[str], None] | None = None

    @property
    def step_id(self) -> str:
        """The id of the step that is running (each concurrent step sees its own)."""
        return CURRENT_STEP.get()

    def setting(self, dotted: str, default: Any = None) -> Any:
        """A config value with `env:` and `secret:` references resolved (secrets from the configured store)."""
        secrets = None
        if isinstance(self.config.raw(dotted), str) and self.config.raw(dotted).startswith("secret:"):
            from agentenv_runtime.engine.records import open_store

            secrets = open_store("secret", self.config, self.host).get
        return self.config.get(dotted, default, secrets=secrets)

    def resource(self, step_id: str, expected: type[R]) -> R:
        if step_id not in self.resources:
            known = ", ".join(self.resources) or "none yet"
            raise StepFailed(f"no step {step_id!r} has created anything to use (created so far: {known})")
        found = self.resources[step_id]
        if not isinstance(found, expected):
            raise StepFailed(
                f"step {step_id!r} made a {type(found).__name__}, not a {expected.__name__}; "
                "point this field at a step that makes one"
            )
        return found

    def resources_of(self, expected: type[R]) -> dict[str, R]:
        return {key: value for key, value in self.resources.items() if isinstance(value, expected)}

    def check_pin(self, env: str, name: str, sha256: str) -> None:
        pinned = self.artifact_pins.get(f"{env}/{name}")
        if pinned and not sha256.startswith(pinned):
            raise StepFailed(
                f"artifact {env}/{name} has sha256 {sha256[:16]}…, but the task pins {pinned}; "
                "load the pinned version or update `pins.artifacts` in the task file"
            )

    def add_resource(self, step_id: str, obj: Any, teardown: Callable[[], Any] | None = None) -> None:
        self.resources[step_id] = obj
        if teardown is not None:
            self.teardowns.append((step_id, teardown))

    def resolve_path(self, relative: str) -> Path:
        path = Path(relative).expanduser()
        if path.is_absolute():
            return path
        base = self.bundle_dir if self.bundle_dir is not None else self.task_file.parent
        return (base / path).resolve()

    def log(self, message: str) -> None:
        if self.logger is not None:
            self.logger(message)
        elif self.verbose:
            print(f"  {message}", file=sys.stderr)

    def teardown_all(self) -> list[str]:
        """Tear down everything the run started, newest first; returns the errors (never raises)."""
        errors = []
        while self.teardowns:
            step_id, teardown = self.teardowns.pop()
            try:
                teardown()
            except Exception as exc:  # teardown of one thing must not stop the others
                errors.append(f"teardown of {step_id}: {type(exc).__name__}: {exc}")
        return errors
