"""Env validator steps 30, 31, 34, 35, 36: each checks one property of a served world and returns rows.

Each is a verifier (`score`, `rows`, `passed`), so a gate or the task's score can read it. A world that
cannot be reached, or does not answer as the protocol says, is a failed row, not a crashed step: the
verdict is the finding.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal, TypeVar

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field

from agentenv_validators.card import card_rows
from agentenv_validators.client import ProbeError
from agentenv_validators.protocol import protocol_rows
from agentenv_validators.results import Row, row, verdict
from agentenv_validators.roundtrip import normalized, roundtrip_rows
from agentenv_validators.schemas import conformance_rows, declared_tools, schema_rows, tools_from_document
from agentenv_validators.target import (
    TargetSettings,
    env_classes,
    installed_classes,
    open_target,
    target_problems,
)

T = TypeVar("T", bound=TargetSettings)


class EnvValidator(Step[T]):
    """Base: a verifier that checks the world named by `env` or `url`."""

    verifier: ClassVar[bool] = True

    def preflight(self, settings: T, step_ids: list[str]) -> list[tuple[str, str]]:
        return target_problems(settings, step_ids)


# ---- 30 -------------------------------------------------------------------------------------------
class VerifyMcpToolSchema(EnvValidator[TargetSettings]):
    """Every tool served over MCP has a description and a complete, valid JSON Schema for its parameters."""

    name = "verify_mcp_tool_schema"
    description = "Every MCP tool has a description and complete, valid parameter schemas (typed, described)."
    Settings = TargetSettings

    async def execute(self, settings: TargetSettings, ctx: StepContext) -> dict[str, Any]:
        with open_target(settings, ctx) as target:
            try:
                tools = await target.client.mcp_tools()
            except ProbeError as exc:
                return verdict([row("MCP tools/list", False, str(exc))])
        if not tools:
            return verdict([row("MCP tools/list", False, "the world serves no tools")])
        return verdict(schema_rows(tools), tools=len(tools))


# ---- 31 -------------------------------------------------------------------------------------------
class SpecSettings(TargetSettings):
    spec: str | None = Field(
        None,
        description="A JSON spec file (a list of tools, {tools: [...]}, or an Environment Card), relative to the "
        "bundle; default: the installed env classes' tool specs.",
    )
    envs: list[str] = Field(
        default_factory=list,
        description="Installed env names whose tool specs are the declared interface (default: the world's envs).",
    )


class VerifySpecConformance(EnvValidator[SpecSettings]):
    """The tools served over MCP match the declared interface: none missing, none extra, same parameters."""

    name = "verify_spec_conformance"
    description = "The tools served over MCP match the env's declared interface (missing, extra, mismatched params)."
    Settings = SpecSettings

    def preflight(self, settings: SpecSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = target_problems(settings, step_ids)
        if settings.spec is not None and settings.envs:
            problems.append(("spec", "give either `spec` (a file) or `envs` (installed envs), not both"))
        return problems

    async def execute(self, settings: SpecSettings, ctx: StepContext) -> dict[str, Any]:
        with open_target(settings, ctx) as target:
            try:
                served = await target.client.mcp_tools()
            except ProbeError as exc:
                return verdict([row("MCP tools/list", False, str(exc))])
            if settings.spec is not None:
                path = ctx.resolve_path(settings.spec)
                try:
                    declared = tools_from_document(json.loads(path.read_text(encoding="utf-8")), str(path))
                except (OSError, ValueError) as exc:
                    raise StepFailed(f"field `spec`: {exc}") from None
                source = str(path)
            else:
                if settings.envs:
                    classes = installed_classes(settings.envs, ctx.host)
                elif target.world is not None:
                    classes = env_classes(target.world)
                else:
                    classes = installed_classes(await _card_envs(target.client), ctx.host)
                declared = declared_tools(list(classes.values()))
                source = "installed env classes " + ", ".join(classes)
        return verdict(conformance_rows(served, declared), declared=source)


async def _card_envs(client: Any) -> list[str]:
    try:
        card = await client.card()
    except ProbeError as exc:
        raise StepFailed(f"cannot tell which envs the world serves: {exc}; give `envs` or `spec`") from None
    names = [str(c.get("name")) for c in card.get("children_environments") or [] if isinstance(c, dict)]
    if not names:
        raise StepFailed("the card lists no children_environments; give `envs` or `spec` to declare the interface")
    return names


# ---- 34 -------------------------------------------------------------------------------------------
class VerifyEnvCard(EnvValidator[TargetSettings]):
    """The Environment Card is served with every required field, and its tool names match MCP's."""

    name = "verify_env_card"
    description = "The Environment Card is served and has every required field; its tool names match the served ones."
    Settings = TargetSettings

    async def execute(self, settings: TargetSettings, ctx: StepContext) -> dict[str, Any]:
        with open_target(settings, ctx) as target:
            try:
                status, card = await target.client.fetch_card()
            except ProbeError as exc:
                return verdict([row("card served", False, str(exc))])
            extra: list[Row] = []
            try:
                served: list[dict[str, Any]] | None = await target.client.mcp_tools()
            except ProbeError as exc:
                served = None
                extra.append(row("MCP tools/list", False, f"cannot compare names with MCP: {exc}"))
        return verdict(card_rows(status, card, served) + extra)


# ---- 35 -------------------------------------------------------------------------------------------
class ProbeRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="Env to add the row to.")
    table: str = Field(description="Table of that env.")
    row: dict[str, Any] = Field(description="The row (column → value); must satisfy the table's constraints.")


class ProbeCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(description="A tool that changes data (called through the data plane's tools/call).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")


class CoreProtocolSettings(TargetSettings):
    probe: ProbeRow | None = Field(
        None, description="The row `data/add` loads (default: a copy of an existing row with its key changed)."
    )
    reset: Literal["loaded", "empty"] = Field(
        "loaded",
        description="What data/reset returns to: `loaded` (agentenv: the last loaded data, data/add included) or "
        "`empty` (servers that clear everything).",
    )
    probe_call: ProbeCall | None = Field(
        None, description="Also check that data/reset undoes a change made by this tool call."
    )


class VerifyEnvCoreProtocol(EnvValidator[CoreProtocolSettings]):
    """`data/reset`, `data/add`, `data/get` answer; an added row is shown; reset behaves as declared."""

    name = "verify_env_core_protocol"
    description = "The data plane answers data/reset, data/add and data/get correctly (add shows a row; reset)."
    Settings = CoreProtocolSettings

    async def execute(self, settings: CoreProtocolSettings, ctx: StepContext) -> dict[str, Any]:
        with open_target(settings, ctx) as target:
            try:
                rows = await protocol_rows(
                    target.client,
                    probe=settings.probe.model_dump() if settings.probe else None,
                    reset=settings.reset,
                    probe_call=settings.probe_call.model_dump() if settings.probe_call else None,
                )
            except ProbeError as exc:
                rows = [row("data plane reachable", False, str(exc))]
        return verdict(rows)


# ---- 36 -------------------------------------------------------------------------------------------
class RoundtripSettings(TargetSettings):
    artifacts: list[str] = Field(
        default_factory=list,
        description="Artifacts to load first: NAME or ENV=NAME_OR_PATH (default: what the deployed world loaded; "
        "for a `url`, its current data).",
    )


class VerifyUniverseLoadExportRoundtrip(EnvValidator[RoundtripSettings]):
    """Load data, export, reload the export into a fresh env, export again: the two exports are equal."""

    name = "verify_universe_load_export_roundtrip"
    description = "Load an artifact, export, reload the export into a fresh env, export again: the exports match."
    Settings = RoundtripSettings

    async def execute(self, settings: RoundtripSettings, ctx: StepContext) -> dict[str, Any]:
        if settings.env is not None:
            world = _deployed(ctx, settings.env)
            classes = env_classes(world)
            exports, sources = first_exports(classes, settings.artifacts, world=world, resolve=ctx.resolve_path)
        else:
            with open_target(settings, ctx) as target:
                try:
                    data, error = await target.client.rpc("data/get")
                except ProbeError as exc:
                    return verdict([row("data/get answers", False, str(exc))])
            if error or not isinstance(data, dict):
                return verdict([row("data/get answers", False, f"error {error}" if error else "not an object")])
            classes = installed_classes(list(data), ctx.host)
            if settings.artifacts:
                exports, sources = first_exports(classes, settings.artifacts, resolve=ctx.resolve_path)
            else:
                exports, sources = data, dict.fromkeys(data, f"data/get of {target.client.base}")
        return verdict(roundtrip_rows(classes, exports, sources))


def _deployed(ctx: StepContext, step_id: str) -> Any:
    try:
        return ctx.resource(step_id, World)
    except StepFailed as exc:
        raise StepFailed(f"field `env`: {exc}") from None


def first_exports(
    classes: dict[str, tuple[type, Any]],
    artifacts: list[str],
    *,
    world: Any = None,
    resolve: Any = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """(env → first export, env → where it came from): artifacts loaded into fresh envs, else `world`'s data."""
    from agentenv_runtime import ArtifactError, World, WorldError, load_artifact_spec

    fresh = World([cls(settings) for cls, settings in classes.values()])
    sources: dict[str, str] = {}
    if artifacts:
        for spec in artifacts:
            target, sep, name = spec.partition("=")
            if sep and resolve is not None and ("/" in name or name.endswith((".json", ".gz"))):
                spec = f"{target}={resolve(name)}"
            try:
                load_artifact_spec(fresh, spec)
            except (ArtifactError, WorldError, ValueError) as exc:
                raise StepFailed(f"field `artifacts`: {spec}: {exc}") from None
    elif world is not None:
        for name, env in world.envs.items():
            if env.loaded:
                fresh.env(name).load_many(list(env.loaded))
            else:
                fresh.env(name).restore(env.snapshot())
                sources[name] = "the deployed world's data (no artifact loaded)"
    for name, env in fresh.envs.items():
        sources.setdefault(name, ", ".join(a.ref for a in env.loaded) or "an empty env")
    return {name: normalized(env.export()) for name, env in fresh.envs.items()}, sources
