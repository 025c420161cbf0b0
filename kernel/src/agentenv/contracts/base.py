"""What every registered contribution has: a `name`, a description and a settings model."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, cast

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypeVar

SettingsT = TypeVar("SettingsT", bound=BaseModel, default=BaseModel)
"""A contribution's settings model; a subclass without a type parameter gets a plain `BaseModel`."""


class NoSettings(BaseModel):
    """Settings model of a contribution that takes none; unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Contribution:
    """Base of every registrable class. Subclasses set `name` and may set `Settings`."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    Settings: ClassVar[type[BaseModel]] = NoSettings


class Configured(Contribution, Generic[SettingsT]):
    """A contribution made from its settings (env, agent kind, trigger kind, sandbox provider, store backend).

    `class Docker(SandboxProvider[DockerSettings])` with `Settings = DockerSettings`: the settings are validated
    here, once, into that model and kept typed as `self.settings`, so no author re-validates or asserts them.
    """

    settings: SettingsT

    def __init__(self, settings: SettingsT | BaseModel | Mapping[str, Any] | None = None) -> None:
        self.settings = self.validated(settings)

    @classmethod
    def validated(cls, settings: BaseModel | Mapping[str, Any] | None) -> SettingsT:
        """`settings` as this class's `Settings` (another model is validated from its fields)."""
        if isinstance(settings, cls.Settings):
            return cast(SettingsT, settings)
        if isinstance(settings, BaseModel):
            settings = settings.model_dump()
        return cast(SettingsT, cls.Settings.model_validate(settings or {}))


def contribution_problem(cls: object, base: type) -> str | None:
    """Say why `cls` cannot be registered as a `base`, or None when it can.

    Checked at load time so a broken plugin is skipped with a reason instead of failing later in a run.
    """
    if not isinstance(cls, type) or not issubclass(cls, base):
        return f"{cls!r} is not a subclass of {base.__module__}.{base.__qualname__}"
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name:
        return f"{cls.__qualname__} has no `name`"
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        return f"{cls.__qualname__} ({name!r}) does not implement abstract methods: {missing}"
    settings = getattr(cls, "Settings", None)
    if not (isinstance(settings, type) and issubclass(settings, BaseModel)):
        return f"{cls.__qualname__} ({name!r}) has a `Settings` that is not a pydantic model"
    return None
