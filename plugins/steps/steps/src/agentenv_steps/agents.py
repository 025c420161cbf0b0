"""Agents in a world: `deploy_agent` makes one of an installed agent kind, `prompt_agent` talks to it.

Agent kinds come from plugins (`agentenv-agents` gives `scripted` and `llm`) and are looked up through
the run's plugin host, never imported, so this plugin works with whatever kinds are installed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentenv.config import ConfigError
from agentenv.contracts import AgentKind, StepContext, StepFailed, ToolAccess, kinds
from agentenv_runtime import World, agent_for_role
from pydantic import Field, ValidationError

from agentenv_steps._common import CoreStep, StepSettings, deployed_world, missing_step, validation_message
from agentenv_steps.agent_sandbox import AgentSandboxSettings, env_var_problems, make_agent_sandbox
from agentenv_steps.reactions import AgentReactions

POLICY_SUFFIXES = (".toml", ".json")
MODEL_FIELDS = ("base_url", "api_key", "model", "api")
"""Settings an agent kind may take from the config's `[agents.<kind>]` table, else its `[model]` table. Every other
setting of the kind that the step leaves out may come from `[agents.<kind>]` alone (`sandbox`: see harness_sandbox)."""


@dataclass
class DeployedAgent:
    """What deploy_agent leaves for later steps."""

    agent: Any
    """The AgentKind instance; later steps attach what kinds may read (`skills`, `peers`, `card`)."""
    tools: ToolAccess
    role: str
    env: str
    """The deploy_env step id of its world."""
    kind: str
    world: World
    reactions: AgentReactions | None = None
    """Scripted reactions of the simulated user (register_agent_triggers), consulted by prompt_agent."""
    sandbox: Any = None
    """The sandbox install_agent put the agent in (collect_artifacts can then name the agent step)."""


# ---- deploy_agent -----------------------------------------------------------------------------------
class DeployAgentSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world the agent acts in.")
    kind: str | None = Field(
        None,
        description=(
            "Agent kind; absent = the `--agent` kind, else `llm` with `--model` or when a model is configured "
            "and the settings give no policy, else `scripted`."
        ),
    )
    settings: dict[str, Any] = Field(default_factory=dict, description="The agent kind's settings.")
    role: str = Field("default", min_length=1, description="The role whose tools the agent sees and calls.")
    system_prompt: str | None = Field(None, description="System prompt, for kinds that take one.")
    model: str | None = Field(None, description="Model name, for kinds that take one (`--model` overrides it).")
    sandbox: AgentSandboxSettings | None = Field(
        None,
        description="The agent's sandbox: {provider, image, cpu, memory_mb, disk_mb, ttl_seconds, network}, "
        "made by the first provider that can enforce it; install_agent installs into it.",
    )
    env_vars: dict[str, str] = Field(
        default_factory=dict,
        description="The environment of the agent's sandbox; `env:NAME` and `secret:KEY` values are resolved.",
    )


class DeployAgent(CoreStep[DeployAgentSettings]):
    name = "deploy_agent"
    description = "Deploy an agent of an installed kind into a world, as a role, with settings and a model."
    Settings = DeployAgentSettings
    creates_resources = True

    def check(self, settings: DeployAgentSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env") + env_var_problems(
            settings.env_vars, settings.sandbox
        )

    def needs_model(self, settings: DeployAgentSettings) -> tuple[str, str] | None:
        if settings.kind == "llm" and not (settings.model or settings.settings.get("model")):
            return "kind", "an `llm` agent"
        return None

    async def execute(self, settings: DeployAgentSettings, ctx: StepContext) -> dict[str, Any]:
        step_id = self.own_id(ctx)
        world: World = deployed_world(ctx, settings.env)
        if settings.role not in world.rbac.roles:
            raise StepFailed(
                f"field `role`: world {world.name!r} has no role {settings.role!r} "
                f"(roles: {', '.join(sorted(world.rbac.roles))}); define it in deploy_env `roles`"
            )
        kind, policy = choose_kind(settings, ctx)
        try:
            kind_cls = ctx.host.get(kinds.AGENT_KINDS, kind)
        except LookupError as exc:
            field = "kind" if settings.kind else "kind (chosen by default)"
            raise StepFailed(f"field `{field}`: {exc}") from None
        sources: dict[str, str] = {}
        options = agent_options(settings, ctx, kind_cls, policy, implicit=settings.kind is None, sources=sources)
        try:
            validated = kind_cls.Settings.model_validate(options)
        except ValidationError as exc:
            message = _settings_hint(validation_message(exc, "settings."), kind)
            raise StepFailed(f"{kind} agent: {message}{_from_config(exc, sources, ctx)}") from None
        try:
            agent = kind_cls(validated)
        except Exception as exc:  # the kind's own checks (a policy file that does not parse, …)
            raise StepFailed(f"field `settings`: the {kind} agent could not be made: {exc}") from None
        tools = world.tool_access(settings.role)
        deployed = DeployedAgent(agent, tools, settings.role, settings.env, kind, world)
        output: dict[str, Any] = {"kind": kind, "role": settings.role, "env": settings.env}
        output["tools"] = len(world.tool_names(settings.role))
        if settings.sandbox is not None:
            try:
                deployed.sandbox, output["sandbox"] = await make_agent_sandbox(
                    settings.sandbox, settings.env_vars, ctx, step_id
                )
            except BaseException:
                _closer(agent)()
                raise
        ctx.add_resource(step_id, deployed, _closer(agent, deployed))
        return output


def _settings_hint(message: str, kind: str) -> str:
    for field in re.findall(r"settings\.(\w+): Field required", message):
        table = "[model]" if field in MODEL_FIELDS else f"[agents.{kind}]"
        message += (
            f" (give `{field}` in the step's settings, or set {table} {field} in .agentenv/config.toml"
            + (", or pass --model" if field == "model" else "")
            + ")"
        )
    return message


def _from_config(exc: ValidationError, sources: dict[str, str], ctx: StepContext) -> str:
    """Where the refused values came from, when the config (not the task) gave them: fix them there."""
    named = sorted({str(err["loc"][0]) for err in exc.errors() if err["loc"] and str(err["loc"][0]) in sources})
    notes = []
    for field in named:
        table, key = sources[field].rsplit(".", 1)
        where = ctx.config.sources.get(sources[field]) or ctx.config.file or ".agentenv/config.toml"
        notes.append(f"`{field}` comes from [{table}] {key}, set in {where}: fix it there")
    return f" ({'; '.join(notes)})" if notes else ""


def choose_kind(settings: DeployAgentSettings, ctx: StepContext) -> tuple[str, Path | None]:
    """The agent kind, and the policy file the `--agent` override names (for scripted agents)."""
    overrides = ctx.overrides
    wanted = agent_for_role(overrides.get("agent"), settings.role)  # `--agent NAME` or `--agent ROLE=NAME`
    agent_kinds = ctx.host.registry(kinds.AGENT_KINDS)
    policy = bundle_agent_file(str(wanted), ctx) if wanted and wanted not in agent_kinds else None
    if wanted and wanted not in agent_kinds and policy is None:
        raise StepFailed(
            f"the --agent override {wanted!r} is neither an installed agent kind "
            f"({', '.join(sorted(agent_kinds)) or 'none installed'}) nor a policy file agents/{wanted}.toml "
            "or .json in the bundle"
        )
    if settings.kind:
        kind = settings.kind
    elif wanted and wanted in agent_kinds:
        kind = str(wanted)
    elif policy is not None:
        kind = "scripted"
    elif overrides.get("model") or (ctx.config.raw("model.model") and not gives_agent(settings.settings)):
        kind = "llm"  # `--model` asks for it; config [model] alone does not replace the task's own agent
    else:
        kind = "scripted"
    return kind, policy if kind == "scripted" else None


def gives_agent(settings: dict[str, Any]) -> bool:
    """Whether a deploy_agent step brings its own agent (a scripted policy): config `[model]` is then for the
    kinds and judges that use it, and the user asks for `llm` by `--agent llm` or `--model`."""
    return bool(settings.get("policy") or settings.get("policy_data"))


def bundle_agent_file(name: str, ctx: StepContext) -> Path | None:
    """`agents/<name>.toml|json` in the bundle (or a path to a policy file), if it exists."""
    candidates = [f"agents/{name}{suffix}" for suffix in POLICY_SUFFIXES]
    if name.endswith(POLICY_SUFFIXES):
        candidates.insert(0, name)
    for candidate in candidates:
        path = ctx.resolve_path(candidate)
        if path.is_file():
            return Path(path)
    return None


def agent_options(
    settings: DeployAgentSettings,
    ctx: StepContext,
    kind_cls: type[AgentKind[Any]],
    policy: Path | None,
    *,
    implicit: bool,
    sources: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The kind's settings: the step's, with paths resolved, the seed, the system prompt, the kind's own
    `[agents.<kind>]` table and [model] filled in. `sources` (when given) learns which table gave each setting
    the config filled in (its dotted key), so an error can send the user to the right line.

    When the kind was chosen by default (not named in the task), settings that only other installed kinds
    take are left out, so a task written for a scripted agent still runs with `--model` (the policy is
    then unused).
    """
    fields = kind_cls.Settings.model_fields
    options = dict(settings.settings)
    sources = {} if sources is None else sources
    table = f"agents.{kind_cls.name}"
    for field in fields:  # the kind's own table gives any of its settings the step leaves out
        if field in options or field in MODEL_FIELDS or field == "sandbox":  # sandbox: see harness_sandbox below
            continue
        if ctx.config.raw(f"{table}.{field}") is not None:
            options[field] = _config_value(ctx, f"{table}.{field}", field)
            sources[field] = f"{table}.{field}"
    if implicit and set(options) - set(fields):  # settings meant for another kind go; a typo still fails
        others = {f for entry in ctx.host.usable(kinds.AGENT_KINDS).values() for f in entry.obj.Settings.model_fields}
        dropped = sorted((set(options) - set(fields)) & others)
        for key in dropped:
            del options[key]
        if dropped:
            ctx.log(f"deploy_agent: {kind_cls.name} takes no {', '.join(dropped)}; left out")
    if policy is not None:
        options.pop("policy_data", None)
        options["policy"] = str(policy)
    elif "policy" in fields and isinstance(options.get("policy"), str):
        options["policy"] = str(ctx.resolve_path(options["policy"]))
    if "seed" in fields and "seed" not in options:
        options["seed"] = ctx.seed
    if settings.system_prompt is not None:
        if "system_prompt" in fields:
            options["system_prompt"] = settings.system_prompt
        else:
            ctx.log(f"deploy_agent: {kind_cls.name} takes no system prompt; `system_prompt` is unused")
    overrides = ctx.overrides
    for field in MODEL_FIELDS:
        if field not in fields:
            continue
        if field == "model":
            value = overrides.get("model") or settings.model or options.get("model")
        elif field == "base_url":
            value = overrides.get("model_url") or options.get("base_url")
        else:
            value = options.get(field)
        for table in (f"agents.{kind_cls.name}", "model"):  # the kind's own table first, then [model]
            if value is not None:
                break
            value = _config_value(ctx, f"{table}.{field}", field)
            if value is not None:
                sources[field] = f"{table}.{field}"
        if value is not None:
            options[field] = value
    if "sandbox" in fields and "sandbox" not in options:  # a kind that runs its own process (a harness)
        wanted = harness_sandbox(kind_cls.name, ctx)
        if wanted is not None:
            options["sandbox"] = wanted
    return options


def _config_value(ctx: StepContext, dotted: str, field: str) -> Any:
    """A config value with `env:` and `secret:` references resolved (secrets from the secret store), in a table
    too (`headers = { Authorization = "env:TOKEN" }`)."""
    raw = ctx.config.raw(dotted)
    if isinstance(raw, dict):
        return {key: _config_value(ctx, f"{dotted}.{key}", field) for key in raw}
    try:
        return ctx.setting(dotted)
    except ConfigError as exc:
        raise StepFailed(f"field `settings.{field}`: {exc}") from None


def harness_sandbox(kind: str, ctx: StepContext) -> str | None:
    """Where an agent kind that runs its own process (a coding-agent harness) runs, when its step does not say:
    `--sandbox`, else `[agents.<kind>] sandbox`, else `[sandbox] default`; the first provider of a chain."""
    wanted = ctx.overrides.get("sandbox")
    for key in (f"agents.{kind}.sandbox", "sandbox.default"):
        if wanted:
            break
        wanted = _config_value(ctx, key, "sandbox")
    names = [part.strip() for part in str(wanted or "").split(",") if part.strip()]
    return names[0] if names else None


def _closer(agent: AgentKind[Any], deployed: DeployedAgent | None = None) -> Callable[[], None]:
    """Close the agent, then tear down the sandbox deploy_agent made for it (not one install_agent named)."""
    own = deployed.sandbox if deployed is not None else None

    def close() -> None:
        closing = getattr(agent, "close", None)
        try:
            if callable(closing):
                closing()
        finally:
            if own is not None:
                own.teardown()

    return close


# ---- prompt_agent -----------------------------------------------------------------------------------
class SimulatedUser(StepSettings):
    persona: str = Field(default="", description="Who the simulated user is (recorded with the conversation).")
    turns: list[str] = Field(default_factory=list, description="What the user says next, one entry per turn.")
    stop_when: str | None = Field(default=None, description="Regex on the agent's reply that ends the conversation.")


class PromptAgentSettings(StepSettings):
    agent: str = Field(description="The deploy_agent step to prompt.")
    prompt: str = Field(min_length=1, description="The first message; {seed} and {run_id} are filled in.")
    user: SimulatedUser | None = Field(None, description="A simulated user for more turns after the first answer.")
    max_turns: int = Field(10, ge=1, le=10_000, description="At most this many agent answers.")
    output_format: dict[str, Any] | None = Field(
        None, description="A JSON Schema the reply must match (validated, asked once more, else the step fails)."
    )
    model: str | None = Field(None, description="Model for this prompt only, for kinds that take per-prompt options.")
    effort: Literal["low", "medium", "high"] | None = Field(None, description="Reasoning effort for this prompt.")
    timeout: float | None = Field(None, gt=0, description="Wall-clock seconds for this prompt.")
    context_id: str | None = Field(
        None, description="A conversation: the same id continues it in a later prompt, a new id starts one."
    )
    files: list[str] = Field(default_factory=list, description="Text files of the bundle attached to the prompt.")
    simulated_user: str | None = Field(
        None,
        description="Id of a setup step whose resource plays the user (it has `session()`: `opening()`, "
        "`reply(text)`, `done`): the conversation opens with its message and goes on until it is done.",
    )

    def prompt_options(self) -> dict[str, Any]:
        """The per-prompt options that were given (an agent kind takes them through `respond_with`)."""
        names = ("output_format", "model", "effort", "timeout", "context_id")
        chosen = {name: getattr(self, name) for name in names if getattr(self, name) is not None}
        return {**chosen, "files": self.files} if self.files else chosen


def attached_files(paths: list[str], ctx: StepContext) -> dict[str, str]:
    """name → text of each `files` entry (bundle-relative), read now so a missing one names the field."""
    attached: dict[str, str] = {}
    for index, relative in enumerate(paths):
        path = Path(ctx.resolve_path(relative))
        try:
            attached[path.name] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StepFailed(
                f"field `files[{index}]`: cannot attach {relative!r} ({exc}); name a text file of the bundle"
            ) from None
    return attached


def user_session(ctx: StepContext, step_id: str) -> Any:
    """A new conversation with the simulated user that step `step_id` deployed."""
    source: Any = ctx.resource(step_id, object)
    if not callable(getattr(source, "session", None)):
        raise StepFailed(
            f"field `simulated_user`: step {step_id!r} made a {type(source).__name__}, not a simulated user "
            "(an object with `session()`)"
        )
    return source.session()


def fill(text: str, ctx: StepContext) -> str:
    """`{seed}` and `{run_id}` placeholders (other braces are left alone)."""
    return text.replace("{seed}", str(ctx.seed)).replace("{run_id}", str(ctx.run_id))


class PromptAgent(CoreStep[PromptAgentSettings]):
    name = "prompt_agent"
    description = "Prompt a deployed agent and run it to completion; optionally more turns from a simulated user."
    Settings = PromptAgentSettings

    def check(self, settings: PromptAgentSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = missing_step("agent", settings.agent, step_ids, "deploy_agent")
        if settings.simulated_user is not None and settings.simulated_user not in step_ids:
            problems.append(("simulated_user", f"no step {settings.simulated_user!r} in this task"))
        if settings.user is not None and settings.user.stop_when is not None:
            try:
                re.compile(settings.user.stop_when)
            except re.error as exc:
                problems.append(("user.stop_when", f"not a regular expression: {exc}"))
        return problems

    async def execute(self, settings: PromptAgentSettings, ctx: StepContext) -> dict[str, Any]:
        deployed = ctx.resource(settings.agent, object)
        if not isinstance(deployed, DeployedAgent):
            raise StepFailed(
                f"field `agent`: step {settings.agent!r} did not deploy an agent "
                f"(it made a {type(deployed).__name__}); name a deploy_agent step"
            )
        user = settings.user or SimulatedUser()
        stop = re.compile(user.stop_when, re.IGNORECASE) if user.stop_when else None
        pending = [fill(turn, ctx) for turn in user.turns]
        text = fill(settings.prompt, ctx)
        turns: list[dict[str, Any]] = []
        files: dict[str, str] = {}
        world = deployed.world
        via: str | None = None
        options = settings.prompt_options()
        if settings.files:
            options["files"] = attached_files(settings.files, ctx)
        respond_with: Any = getattr(deployed.agent, "respond_with", None)
        if options and respond_with is None:
            raise StepFailed(
                f"field `{next(iter(options))}`: the {deployed.kind} agent takes no per-prompt options "
                f"({', '.join(options)}); leave them out or use a kind that does (claude-code, codex)"
            )
        session = user_session(ctx, settings.simulated_user) if settings.simulated_user else None
        if session is not None:
            text = await session.opening()
        ended = "turns_done"
        while True:
            try:
                if options:
                    response = await respond_with(text, deployed.tools, options)
                else:
                    response = await deployed.agent.respond(text, deployed.tools)
            except Exception as exc:
                raise StepFailed(
                    f"the {deployed.kind} agent failed on turn {len(turns) + 1}: {type(exc).__name__}: {exc}"
                ) from None
            reply = str(getattr(response, "text", "") or "")
            turns.append({"user": text, "agent": reply, **({"reaction": via} if via else {})})
            files.update(getattr(response, "files", None) or {})
            world.trajectory.record(
                "agent_turn",
                world.clock.now().isoformat(),
                role=deployed.role,
                persona=user.persona or None,
                user=text,
                agent=reply,
            )
            if stop is not None and stop.search(reply):
                ended = "stop_when"
                break
            if len(turns) >= settings.max_turns:
                ended = "max_turns"
                break
            if session is not None:
                text = await session.reply(reply)
                if session.done:
                    ended = "user_stop"
                    break
                continue
            reaction = deployed.reactions.react(len(turns), reply, world) if deployed.reactions else None
            if reaction is None and not pending:
                ended = "turns_done"
                break
            text, via = (fill(reaction.reply, ctx), reaction.id) if reaction else (pending.pop(0), None)
        stored = {}
        for name, content in files.items():  # the agent's output files live with the run in the object store
            key = f"runs/{ctx.run_id}/files/{ctx.step_id}/{name}"
            try:
                ctx.objects.put(key, content.encode() if isinstance(content, str) else bytes(content))
            except ValueError as exc:
                raise StepFailed(f"the agent wrote a file named {name!r} that cannot be stored: {exc}") from None
            stored[name] = key
        return {
            "response": reply,
            "structured": getattr(response, "structured", None),
            "turns": turns,
            "files": stored,
            # Why the conversation ended (a benchmark such as τ² scores a conversation cut off by the turn limit
            # as zero): the user's stop_when matched, max_turns was reached, the simulated user ended it, or the
            # scripted turns ran out.
            "ended": ended,
        }
