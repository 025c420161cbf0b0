"""`deploy_sandbox`: a bare sandbox from an installed provider, labelled with the run and torn down with it."""

from __future__ import annotations

import asyncio
from typing import Any

from agentenv.contracts import SandboxSpec, StepContext, StepFailed
from agentenv_runtime import RUN_LABEL, NoSandbox, create_in_chain
from pydantic import Field, ValidationError, field_validator

from agentenv_steps._common import CoreStep, StepSettings, plugin_host, validation_message


class DeploySandboxSettings(StepSettings):
    provider: str | None = Field(
        None,
        description="Sandbox provider, or a fallback chain (`docker,inline`): the first that is available and "
        "accepts the spec serves. Absent = config `sandbox.default` (inline).",
    )
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


class DeploySandbox(CoreStep[DeploySandboxSettings]):
    name = "deploy_sandbox"
    description = "Create a bare sandbox (container or VM) with a provider; torn down when the run ends."
    Settings = DeploySandboxSettings
    creates_resources = True

    async def execute(self, settings: DeploySandboxSettings, ctx: StepContext) -> dict[str, Any]:
        step_id = self.own_id(ctx)
        chain = settings.provider or ctx.config.get("sandbox.default") or "inline"
        field = "provider" if settings.provider else "provider (from config sandbox.default)"
        try:
            spec = SandboxSpec.model_validate(
                settings.spec.model_dump() | {"labels": {**settings.spec.labels, RUN_LABEL: ctx.run_id}}
            )
        except ValidationError as exc:
            raise StepFailed(f"field `spec`: {validation_message(exc)}") from None
        sandbox, served, passed = await sandbox_from_chain(chain, spec, field, ctx)
        ctx.add_resource(step_id, sandbox, sandbox.teardown)
        return {
            "id": sandbox.id,
            "provider": served,
            "passed_over": passed,
            "mode": spec.mode,
            "labels": dict(spec.labels),
        }


async def sandbox_from_chain(chain: str, spec: SandboxSpec, field: str, ctx: StepContext) -> tuple[Any, str, list[str]]:
    """(sandbox, provider that served, why each earlier one passed) from the first provider of `chain` that
    can honour `spec`; StepFailed naming `field` with every provider's reason when none can."""
    try:
        return await asyncio.to_thread(create_in_chain, chain, spec, ctx.config, plugin_host(ctx), ctx.log)
    except NoSandbox as exc:
        raise StepFailed(f"field `{field}`: {exc}") from None
    except Exception as exc:
        raise StepFailed(
            f"field `{field}`: provider chain {chain!r} could not create the sandbox: {type(exc).__name__}: {exc}"
        ) from None
