"""Finding what earlier steps made (agents, sandboxes) and filling `{{ step.path }}` templates from their outputs.

Shared by the steps that act on a deployed agent or a sandbox, or that take input from earlier outputs.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from agentenv.contracts import StepContext, StepFailed

if TYPE_CHECKING:
    from agentenv_steps.agents import DeployedAgent

TEMPLATE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""`{{ ask.response }}`: the output `response` of step `ask`; `{{ seed }}` and `{{ run_id }}` too."""
BUILTINS = ("seed", "run_id")


class TornDown:
    """Put in place of a resource that `teardown_sandboxes` removed, so a later step gets a clear error."""

    def __init__(self, step_id: str, by: str) -> None:
        self._step_id, self._by = step_id, by

    def __repr__(self) -> str:
        return f"TornDown({self._step_id!r}, by={self._by!r})"

    def __getattr__(self, name: str) -> Any:
        raise StepFailed(
            f"what step {self._step_id!r} created was torn down by step {self._by!r} (teardown_sandboxes); "
            "order the steps so nothing uses it afterwards"
        )


def deployed_agent(ctx: StepContext, step_id: str, field: str = "agent") -> DeployedAgent:
    """The DeployedAgent of a deploy_agent (or deploy_human_agent) step, or a StepFailed naming the field."""
    from agentenv_steps.agents import DeployedAgent

    try:
        found = ctx.resource(step_id, object)
    except StepFailed as exc:
        raise StepFailed(f"field `{field}`: {exc}") from None
    if isinstance(found, TornDown):
        found.check  # noqa: B018 - raises the clear "torn down" error
    if not isinstance(found, DeployedAgent):
        raise StepFailed(
            f"field `{field}`: step {step_id!r} did not deploy an agent (it made a {type(found).__name__}); "
            "name a deploy_agent or deploy_human_agent step"
        )
    return found


def sandbox_of(ctx: StepContext, step_id: str, field: str) -> Any:
    """The sandbox a step made (deploy_sandbox, run_docker_container), or the one an agent was installed in."""
    try:
        found = ctx.resource(step_id, object)
    except StepFailed as exc:
        raise StepFailed(f"field `{field}`: {exc}") from None
    if isinstance(found, TornDown):
        found.check  # noqa: B018 - raises the clear "torn down" error
    box = getattr(found, "sandbox", None) if not _is_sandbox(found) else found
    if box is None or not _is_sandbox(box):
        raise StepFailed(
            f"field `{field}`: step {step_id!r} made a {type(found).__name__}, which is not a sandbox and has none; "
            "name a deploy_sandbox or run_docker_container step (or an agent that install_agent put in a sandbox)"
        )
    return box


def _is_sandbox(obj: Any) -> bool:
    return all(callable(getattr(type(obj), name, None)) for name in ("exec", "put_file", "get_file", "teardown"))


# ---- templates over earlier outputs -----------------------------------------------------------------
def template_steps(value: Any) -> set[str]:
    """Step ids the templates in `value` (strings, recursively in lists and dicts) refer to."""
    found: set[str] = set()
    if isinstance(value, str):
        for match in TEMPLATE.finditer(value):
            root = match.group(1).split(".")[0]
            if root and root not in BUILTINS:
                found.add(root)
    elif isinstance(value, dict):
        for item in value.values():
            found |= template_steps(item)
    elif isinstance(value, list):
        for item in value:
            found |= template_steps(item)
    return found


def render(value: Any, ctx: StepContext, where: str) -> Any:
    """Fill templates from `ctx.outputs`. A string that is exactly one template keeps the value's type."""
    if isinstance(value, dict):
        return {key: render(item, ctx, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, ctx, f"{where}[{i}]") for i, item in enumerate(value)]
    if not isinstance(value, str):
        return value
    whole = TEMPLATE.fullmatch(value.strip())
    if whole:
        return _lookup(whole.group(1), ctx, where)
    return TEMPLATE.sub(lambda m: _as_text(_lookup(m.group(1), ctx, where)), value)


def _lookup(path: str, ctx: StepContext, where: str) -> Any:
    parts = path.split(".")
    if parts[0] == "seed" and len(parts) == 1:
        return ctx.seed
    if parts[0] == "run_id" and len(parts) == 1:
        return ctx.run_id
    outputs = ctx.outputs
    if parts[0] not in outputs:
        raise StepFailed(
            f"field `{where}`: template '{{{{ {path} }}}}' names step {parts[0]!r}, which has no output yet "
            f"(outputs so far: {', '.join(outputs) or 'none'}); make this step depend on it"
        )
    data: Any = outputs[parts[0]]
    for depth, part in enumerate(parts[1:], start=1):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and re.fullmatch(r"-?\d+", part) and -len(data) <= int(part) < len(data):
            data = data[int(part)]
        else:
            so_far = ".".join(parts[:depth])
            keys = ", ".join(map(str, data)) if isinstance(data, dict) else type(data).__name__
            raise StepFailed(f"field `{where}`: template '{{{{ {path} }}}}': {so_far} has no {part!r} (has: {keys})")
    return data


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def jsonable(value: Any) -> Any:
    """`value` as plain JSON data (unknown objects become their string form)."""
    return json.loads(json.dumps(value, default=str))
