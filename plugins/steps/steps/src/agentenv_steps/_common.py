"""What the step modules share: strict settings, step-id checks, turning library errors into `StepFailed`."""

from __future__ import annotations

from typing import Annotated, TypeVar

from agentenv import PluginHost
from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

StrList = Annotated[list[str], BeforeValidator(lambda value: [value] if isinstance(value, str) else value)]
"""A list of strings that a task file may also give as one string (`artifacts = "acme"`)."""

S = TypeVar("S", bound=BaseModel)


class StepSettings(BaseModel):
    """Base of every step's fields: unknown keys are refused, so a typo fails preflight."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # built when a task uses the step


def missing_step(field: str, step_id: str | None, step_ids: list[str], what: str) -> list[tuple[str, str]]:
    """A preflight problem when `step_id` names no step of the task."""
    if step_id is None or step_id in step_ids:
        return []
    return [(field, f"no step {step_id!r} in this task; name the id of the {what} step (steps: {', '.join(step_ids)})")]


def validation_message(exc: ValidationError, prefix: str = "") -> str:
    """A pydantic error as `field: message; field: message`, each field prefixed (e.g. `settings.`)."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        where = f"{prefix}{loc}" if loc else prefix.rstrip(".") or "(value)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


class CoreStep(Step[S]):
    """Base of this plugin's steps: `check` is the preflight; `own_id` is the running step's id."""

    def preflight(self, settings: S, step_ids: list[str]) -> list[tuple[str, str]]:
        return self.check(settings, step_ids)

    def check(self, settings: S, step_ids: list[str]) -> list[tuple[str, str]]:
        """Problems found before the task starts, as (field, message)."""
        return []

    def own_id(self, ctx: StepContext) -> str:
        """The id of the running step (`ctx.step_id`), which keys what it creates for later steps."""
        found = ctx.step_id
        if not found:
            raise StepFailed(
                f"{self.name}: the engine did not say which step is running (ctx.step_id is empty), so what it "
                "creates cannot be registered for later steps; run it through the task engine"
            )
        return found


def deployed_world(ctx: StepContext, step_id: str, field: str = "env") -> World:
    """The World an earlier deploy_env step made, or a StepFailed naming the field to fix."""
    try:
        return ctx.resource(step_id, World)
    except StepFailed as exc:
        raise StepFailed(f"field `{field}`: {exc}") from None


def plugin_host(ctx: StepContext) -> PluginHost:
    """`ctx.host` as the `PluginHost` that the runtime's sandbox helpers (`create_in_chain`, …) take."""
    host = ctx.host
    if not isinstance(host, PluginHost):
        raise StepFailed(
            f"the run's plugin host is a {type(host).__name__}, not an agentenv PluginHost, so sandboxes cannot "
            "be made; run the step through the task engine"
        )
    return host
