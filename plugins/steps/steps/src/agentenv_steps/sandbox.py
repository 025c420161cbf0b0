"""`deploy_sandbox`: a bare sandbox from an installed provider, labelled with the run and torn down with it."""

from __future__ import annotations

import asyncio
from typing import Any

from agentenv.contracts import SandboxSpec, SpecRefused, StepFailed
from pydantic import Field, ValidationError, field_validator

from agentenv_steps._common import CoreStep, StepSettings, validation_message

RUN_LABEL = "agentenv.run"


class DeploySandboxSettings(StepSettings):
    provider: str | None = Field(None, description="Sandbox provider; absent = config `sandbox.default` (inline).")
    spec: SandboxSpec = Field(
        default_factory=SandboxSpec,
        description="mode, image, command, env, cpu, memory_mb, disk_mb, ports, ttl_seconds, network, labels.",
    )

    @field_validator("spec", mode="before")
    @classmethod
    def _known_fields(cls, value: Any) -> Any:
        """SandboxSpec ignores unknown keys; a typo (`memory` for `memory_mb`) must not pass silently."""
        if isinstance(value, dict):
            unknown = sorted(set(value) - set(SandboxSpec.model_fields))
            if unknown:
                raise ValueError(
                    f"unknown field(s) {', '.join(unknown)} (known: {', '.join(SandboxSpec.model_fields)})"
                )
        return value


class DeploySandbox(CoreStep):
    name = "deploy_sandbox"
    description = "Create a bare sandbox (container or VM) with a provider; torn down when the run ends."
    Settings = DeploySandboxSettings
    creates_resources = True

    async def execute(self, settings: DeploySandboxSettings, ctx: Any) -> dict[str, Any]:
        step_id = self.own_id(ctx)
        name = settings.provider or ctx.config.get("sandbox.default") or "inline"
        field = "provider" if settings.provider else "provider (from config sandbox.default)"
        provider = make_provider(name, field, ctx)
        usable, reason = provider.available()
        if not usable:
            raise StepFailed(f"field `{field}`: sandbox provider {name!r} cannot run here: {reason}")
        if settings.spec.mode not in provider.modes:
            raise StepFailed(
                f"field `spec.mode`: provider {name!r} makes {', '.join(sorted(provider.modes))} "
                f"sandboxes, not {settings.spec.mode!r}"
            )
        try:
            spec = SandboxSpec.model_validate(
                settings.spec.model_dump() | {"labels": {**settings.spec.labels, RUN_LABEL: ctx.run_id}}
            )
        except ValidationError as exc:
            raise StepFailed(f"field `spec`: {validation_message(exc)}") from None
        try:
            sandbox = await asyncio.to_thread(provider.create, spec)
        except SpecRefused as exc:
            raise StepFailed(f"field `spec`: provider {name!r} refused the spec: {exc}") from None
        except Exception as exc:
            raise StepFailed(f"provider {name!r} could not create the sandbox: {type(exc).__name__}: {exc}") from None
        ctx.add_resource(step_id, sandbox, sandbox.teardown)
        return {"id": sandbox.id, "provider": name, "mode": spec.mode, "labels": dict(spec.labels)}


def make_provider(name: str, field: str, ctx: Any) -> Any:
    """The provider, made with its settings from `[plugins.<distribution>.<provider>]` in the config."""
    registry = ctx.host.registry("sandbox_providers")
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none installed"
        raise StepFailed(
            f"field `{field}`: no sandbox provider {name!r} (installed: {known}); `inline` and `process` "
            "come with agentenv-sandbox-local, `docker` with agentenv-docker"
        )
    entry = registry[name]
    raw = ctx.config.plugin_settings(entry.dist).get(name) or {}
    try:
        return entry.obj(entry.obj.Settings.model_validate(raw)) if raw else entry.obj()
    except ValidationError as exc:
        raise StepFailed(f"config [plugins.{entry.dist}.{name}]: {validation_message(exc)}") from None
    except Exception as exc:
        raise StepFailed(f"sandbox provider {name!r} could not be set up: {type(exc).__name__}: {exc}") from None
