"""The task checked against the install before anything starts: part of every run's preflight.

Preflight proper (each step type's own field checks) sees one step's settings and the step ids. This also sees
what is installed and what the bundle holds, so it answers what that cannot: do the envs a world names exist (or
are they broken, and why) and take the settings given, do its roles and access changes name tools the world
has, do its artifacts exist, can its sandbox chain be tried, are the agent kinds and trigger kinds installed,
does the role an agent acts as exist, and do the tools each scripted policy and trigger calls exist in the world,
as the composed world names them. `TaskRunner.prepare` runs it, so `agentenv run`, `--dry-run` (which stops
there), episodes and rollout runners refuse the same tasks with the same lines.

It reads the fields of the first-party step types by name (`deploy_env`, `load_artifact`,
`register_env_triggers`, `modify_env_tool_access`, `deploy_agent`) and a scripted policy's
`turn[].actions[].call`, the formats their plugins document; a step type it does not know is left to its
preflight. Nothing is loaded or started: a world here is its envs with empty tables, for the tool names;
artifacts are found by name or path, never read; `store:` objects and `step:` outputs are left to the run, the
only one that can see them.

This is the one place the engine checks a task against the install; keep new checks of that kind here.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv import PluginHost
from agentenv.config import Config
from agentenv.contracts import kinds
from pydantic import ValidationError

from agentenv_runtime.engine.agent_choice import EVERY_ROLE, agent_choices, agent_for_role
from agentenv_runtime.engine.order import mentioned
from agentenv_runtime.engine.task import StepDecl, TaskFile
from agentenv_runtime.world.build import broken_reason, env_class, split_names
from agentenv_runtime.world.rbac import DEFAULT_ROLE
from agentenv_runtime.world.world import GET_TIME, World, WorldError, unknown_tool_message

POLICY_SUFFIXES = (".toml", ".json")
STORE_PREFIX = "store:"
RUN_TIME_PREFIXES = (STORE_PREFIX, "step:")
IN_PROCESS = "inline"
"""In a `sandbox` chain: the world runs in process (whether or not a provider of that name is installed)."""


def missing(host: PluginHost, kind: Any, name: str) -> str | None:
    """None when `name` is a usable contribution of `kind`; else why not, naming what is installed."""
    broken = broken_reason(host, kind, name)
    if broken is not None:
        return broken
    if name in host.registry(kind):
        return None
    usable = sorted(host.usable(kind))
    close = difflib.get_close_matches(name, usable, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"no {kind.label} {name!r} (installed: {', '.join(usable) or 'none'}); fix: {hint}see `agentenv plugin list`"


def sandbox_problem(host: PluginHost, chain: str) -> str | None:
    """Why a sandbox chain (`docker,process`) cannot even be tried: a provider nothing installed provides."""
    providers = host.registry(kinds.SANDBOX_PROVIDERS)
    for name in [part.strip() for part in chain.split(",") if part.strip()]:
        if name != IN_PROCESS and name not in providers:
            known = ", ".join(sorted(providers)) or "none installed"
            return f"no sandbox provider {name!r} (installed: {known})"
    return None


def as_list(value: Any) -> list[Any]:
    """A field that takes one string or a list of them (`artifacts = "acme"`), as a list."""
    return [value] if isinstance(value, str) else list(value or [])


@dataclass
class InstallCheck:
    """One task's check: step by step, each first-party lifecycle step's fields against the install."""

    task: TaskFile
    host: PluginHost
    bundle_dir: Path | None
    agent: str | None = None
    """The `--agent` override: an agent kind or a policy file of the bundle, for every role or per role
    (`red=solver,yellow=bot`, see `agent_choice`)."""
    model: str | None = None
    """The `--model` choice, which makes `llm` the default agent kind."""
    configured_model: str | None = None
    """Config `[model] model`, which makes `llm` the default only for steps that give no policy of their own."""
    config: Config | None = None
    """Where a model agent's endpoint may come from (`[agents.<kind>]`, `[model]`); None: not checked."""
    model_url: str | None = None
    """The `--model-url` choice."""
    steps: set[str] | None = None
    """The ids of the steps whose fields their step types accepted (None: all); the others are left out."""
    problems: list[str] = field(default_factory=list)
    worlds: dict[str, World] = field(default_factory=dict)
    """deploy_env step id → a world of the same envs and roles (empty, for tool and role names)."""
    open_worlds: set[str] = field(default_factory=set)
    """deploy_env step ids whose worlds gain tools only when deployed (MCP servers, `mcp`): a tool name the
    preflight world lacks may be theirs, so it is checked by the deploy instead."""

    @property
    def base(self) -> Path:
        return self.bundle_dir if self.bundle_dir is not None else self.task.path.parent

    def problem(self, step: StepDecl, where: str, message: str) -> None:
        self.problems.append(f"{self.task.path}: step {step.id!r} ({step.type}): {where}: {message}")

    def check(self) -> list[str]:
        checks = {
            "deploy_env": self.deploy_env,
            "load_artifact": self.load_artifact,
            "register_env_triggers": self.triggers,
            "modify_env_tool_access": self.access,
            "deploy_agent": self.deploy_agent,
        }
        for step in self.task.steps:
            check = checks.get(step.type)
            if check is not None and (self.steps is None or step.id in self.steps):
                check(step, step.fields)
        self.agent_roles()
        return self.problems

    def agent_roles(self) -> None:
        """Each `--agent ROLE=NAME` names a role some deploy_agent step of the task acts as."""
        roles = {str(s.fields.get("role", DEFAULT_ROLE)) for s in self.task.steps if s.type == "deploy_agent"}
        for role, name in agent_choices(self.agent).items():
            if role != EVERY_ROLE and role not in roles:
                acting = ", ".join(sorted(roles)) or "none: it deploys no agent"
                self.problems.append(
                    f"{self.task.path}: --agent {role}={name}: no deploy_agent step acts as role {role!r} (the task's "
                    f"agents act as: {acting}); fix: name one of those roles"
                )

    def world_of(self, fields: dict[str, Any]) -> World | None:
        return self.worlds.get(str(fields.get("env", "")))

    def tool_missing(self, step: StepDecl, where: str, tool: Any, world: World | None) -> None:
        if world is not None and isinstance(tool, str) and tool not in world.tools and tool != GET_TIME:
            if any(self.worlds.get(step_id) is world for step_id in self.open_worlds):
                return
            self.problem(step, where, unknown_tool_message(tool, world))

    # ---- worlds --------------------------------------------------------------------------------------
    def deploy_env(self, step: StepDecl, fields: dict[str, Any]) -> None:
        why = sandbox_problem(self.host, str(fields.get("sandbox") or IN_PROCESS))
        if why:
            fix = f"name installed providers, or sandbox = {IN_PROCESS!r} (in process)"
            self.problem(step, "field `sandbox`", f"{why}; fix: {fix}")
        names = split_names(fields.get("envs") or [])
        settings = fields.get("settings") or {}
        envs = []
        for name in names:
            why = missing(self.host, kinds.ENVS, name)
            if why:
                self.problem(step, "field `envs`", why)
                continue
            try:
                cls = env_class(self.host, name)
            except WorldError as exc:
                self.problem(step, "field `envs`", str(exc))
                continue
            try:
                validated = cls.Settings.model_validate(settings.get(name) or {})
            except ValidationError as exc:
                takes = ", ".join(cls.Settings.model_fields) or "none"
                for error in exc.errors(include_url=False):
                    where = ".".join(["settings", name, *map(str, error["loc"])])
                    self.problem(step, f"field `{where}`", f"{error['msg']}; fix: give settings {name} takes ({takes})")
                continue
            try:
                envs.append(cls(validated))
            except ValueError as exc:  # the env's own checks of settings its model accepted
                self.problem(step, f"field `settings.{name}`", " ".join(str(exc).split()))
        if len(envs) != len(names):
            return
        try:
            world = World(envs, roles=fields.get("roles") or {})
        except WorldError as exc:
            self.problem(step, "field `envs`", str(exc))
            return
        self.worlds[step.id] = world
        if fields.get("mcp"):
            self.open_worlds.add(step.id)  # roles may name the servers' tools: the deploy checks them
        else:
            for where, message in world.role_problems():
                self.problem(step, f"field `{where}`", message)
        self.artifacts(step, "artifacts", fields, world)

    def load_artifact(self, step: StepDecl, fields: dict[str, Any]) -> None:
        world = self.world_of(fields)
        if world is not None:
            self.artifacts(step, "artifacts", fields, world)

    def artifacts(self, step: StepDecl, name: str, fields: dict[str, Any], world: World) -> None:
        for index, spec in enumerate(as_list(fields.get(name))):
            why = self.artifact_problem(world, str(spec))
            if why:
                self.problem(step, f"field `{name}[{index}]`", why)

    def artifact_problem(self, world: World, spec: str) -> str | None:
        target, _, name = spec.partition("=")
        if spec.startswith(RUN_TIME_PREFIXES) or name.startswith(RUN_TIME_PREFIXES):
            return None  # in the object store or made by an earlier step: only the run can look
        if name:
            if target not in world.envs:
                return f"{spec!r}: the world has no env {target!r} (envs: {', '.join(world.envs)})"
            env = world.envs[target]
            if name in env.artifact_paths() or (self.base / name).is_file():
                return None
            packaged = ", ".join(sorted(env.artifact_paths())) or "none"
            file = self.base / name
            return (
                f"{spec!r}: {target} ships no artifact {name!r} (packaged: {packaged}) and there is no file {file}; "
                "fix: name a packaged artifact or an existing file (relative to the bundle)"
            )
        if any(spec in env.artifact_paths() for env in world.envs.values()) or (self.base / spec).is_file():
            return None
        shipped = {env.name: sorted(env.artifact_paths()) for env in world.envs.values()}
        return f"{spec!r}: no env of the world ships it (shipped: {shipped}); use ENV=PATH for a file"

    # ---- rules ---------------------------------------------------------------------------------------
    def triggers(self, step: StepDecl, fields: dict[str, Any]) -> None:
        world = self.world_of(fields)
        for index, trigger in enumerate(fields.get("triggers") or []):
            if not isinstance(trigger, dict):
                continue  # preflight says what a trigger looks like
            kind = str(trigger.get("kind", ""))
            why = missing(self.host, kinds.TRIGGER_KINDS, kind)
            if why:
                self.problem(step, f"field `triggers[{index}].kind`", why)
            when = trigger.get("when")
            if kind == "tool_call" and isinstance(when, dict):  # a watched tool the world lacks never fires
                for tool in as_list(when.get("tool")):
                    self.tool_missing(step, f"field `triggers[{index}].when.tool`", tool, world)
            for position, action in enumerate(trigger.get("actions") or []):
                if isinstance(action, dict):
                    self.action_tools(step, f"field `triggers[{index}].actions[{position}]", action, world)

    def action_tools(self, step: StepDecl, where: str, action: dict[str, Any], world: World | None) -> None:
        """The tools a trigger action calls or changes access to (a typo in `disable` would leave it enabled)."""
        call = action.get("call_tool")
        if isinstance(call, dict):
            self.tool_missing(step, f"{where}.call_tool.tool`", call.get("tool"), world)
        change = action.get("set_tool_access")
        if isinstance(change, dict):
            for key in ("enable", "disable"):
                for tool in as_list(change.get(key)):
                    self.tool_missing(step, f"{where}.set_tool_access.{key}`", tool, world)

    def access(self, step: StepDecl, fields: dict[str, Any]) -> None:
        world = self.world_of(fields)
        for key in ("enable", "disable"):
            for tool in as_list(fields.get(key)):
                self.tool_missing(step, f"field `{key}`", tool, world)

    def roles_granted(self, env_step: str) -> set[str]:
        """Roles steps and triggers of the task create on `env_step`'s world mid-run (access changes)."""
        granted = set()
        for step in self.task.steps:
            fields = step.fields
            if step.type == "modify_env_tool_access" and fields.get("env") == env_step:
                granted.add(str(fields.get("role", DEFAULT_ROLE)))
            if step.type == "register_env_triggers" and fields.get("env") == env_step:
                for trigger in fields.get("triggers") or []:
                    for action in trigger.get("actions") or [] if isinstance(trigger, dict) else []:
                        change = action.get("set_tool_access") if isinstance(action, dict) else None
                        if isinstance(change, dict):
                            granted.add(str(change.get("role")))
        return granted

    # ---- agents --------------------------------------------------------------------------------------
    def deploy_agent(self, step: StepDecl, fields: dict[str, Any]) -> None:
        world = self.world_of(fields)
        role = str(fields.get("role", DEFAULT_ROLE))
        if world is not None and role not in world.rbac.roles and role not in self.roles_granted(str(fields["env"])):
            roles = "roles: " + ", ".join(sorted(world.rbac.roles))
            fix = f"define it in the `roles` of step {fields['env']!r}, or act as one of those"
            self.problem(step, "field `role`", f"world {world.name!r} has no role {role!r} ({roles}); fix: {fix}")
        registered = self.host.registry(kinds.AGENT_KINDS)
        policy: Path | None = None
        agent = agent_for_role(self.agent, role)
        if agent and agent not in registered:
            policy = self.bundle_agent(agent)
            if policy is None:
                self.problem(
                    step,
                    "--agent",
                    f"{agent!r} is neither an agent kind ({', '.join(sorted(registered)) or 'none installed'}) "
                    f"nor a policy file agents/{agent}.toml or .json in {self.base}",
                )
                return
        kind = str(fields.get("kind") or self.default_kind(agent, policy, fields.get("settings") or {}))
        why = missing(self.host, kinds.AGENT_KINDS, kind)
        if why:
            self.problem(step, "field `kind`" if fields.get("kind") else "agent kind", why)
            return
        settings = fields.get("settings") or {}
        self.model_endpoint(step, kind, fields, settings)
        if policy is None and kind == "scripted" and isinstance(settings.get("policy"), str):
            policy = self.base / settings["policy"]
            if not policy.is_file():
                fix = "write it, or name an existing file (relative to the bundle)"
                self.problem(step, "field `settings.policy`", f"no policy file {policy}; fix: {fix}")
                return
        opens = str(fields.get("env")) in self.open_worlds  # an MCP server's tools are known once it runs
        if kind == "scripted" and world is not None and not opens and not self.gains_tools(step):
            if policy is not None:
                self.policy_file(step, policy, world)
            elif isinstance(settings.get("policy_data"), dict):  # the same policy written in the task
                self.policy_tools(step, "settings.policy_data", settings["policy_data"], world)

    def model_endpoint(self, step: StepDecl, kind: str, fields: dict[str, Any], settings: dict[str, Any]) -> None:
        """A kind that requires an endpoint or a model (`llm`: `base_url`, `model`) gets it from somewhere, where
        deploy_agent looks (agentenv-steps' `agent_options`, mirrored): the step's settings, `--model` and
        `--model-url`, the config's `[agents.<kind>]`, then `[model]`."""
        if self.config is None or not isinstance(settings, dict):
            return
        model_fields = self.host.get(kinds.AGENT_KINDS, kind).Settings.model_fields
        given = {"model": self.model or fields.get("model"), "base_url": self.model_url}
        for name in ("base_url", "model"):
            if name not in model_fields or not model_fields[name].is_required() or settings.get(name) is not None:
                continue
            if given[name] or any(self.config.raw(f"{table}.{name}") for table in (f"agents.{kind}", "model")):
                continue
            flag = "--model-url URL" if name == "base_url" else "--model NAME"
            fix = f"set [model] {name} in .agentenv/config.toml, pass {flag}, or give settings.{name}"
            needs = f"the {kind} agent needs `{name}`, and none is given; fix: {fix}"
            self.problem(step, f"field `settings.{name}`", needs)

    def gains_tools(self, agent_step: StepDecl) -> bool:
        """Whether a step that may give this agent tools names it: peers (`message_peer`), validators (a probe
        world of their own), skills and MCP servers give an agent tools the world lacks, so its policy's calls are
        left to the run. Worlds, agents and prompts give none."""
        plain = ("prompt_agent", "deploy_agent", "deploy_env")
        others = (s for s in self.task.steps if s is not agent_step and s.type not in plain)
        return any(agent_step.id in mentioned(s.fields) for s in others)

    def default_kind(self, agent: str | None, policy: Path | None, settings: dict[str, Any]) -> str:
        """The kind deploy_agent takes without `kind` (agentenv-steps' `choose_kind`, mirrored): the `--agent`
        kind, else scripted for an `--agent` policy file, else `llm` with `--model`, or with a configured model
        when the step gives no policy of its own, else scripted."""
        if agent and agent in self.host.registry(kinds.AGENT_KINDS):
            return agent
        own = isinstance(settings, dict) and bool(settings.get("policy") or settings.get("policy_data"))
        wants_llm = self.model or (self.configured_model and not own)
        return "llm" if policy is None and wants_llm else "scripted"

    def bundle_agent(self, name: str) -> Path | None:
        candidates = [name] if name.endswith(POLICY_SUFFIXES) else []
        candidates += [f"agents/{name}{suffix}" for suffix in POLICY_SUFFIXES]
        return next((self.base / c for c in candidates if (self.base / c).is_file()), None)

    def policy_file(self, step: StepDecl, policy: Path, world: World) -> None:
        try:
            text = policy.read_text(encoding="utf-8")
            data = tomllib.loads(text) if policy.suffix == ".toml" else json.loads(text)
        except (OSError, ValueError) as exc:
            self.problem(step, f"policy {policy}", f"cannot be read: {exc}")
            return
        self.policy_tools(step, policy.name, data, world)

    def policy_tools(self, step: StepDecl, where: str, data: Any, world: World) -> None:
        """Every `call` of a scripted policy (a file, or `policy_data` in the task) names a tool of the world, as
        composition names it. Whether the agent's role may call it is not checked: rules and steps change access
        mid-run, and a policy may try a refused call on purpose."""
        known = set(world.tools) | {GET_TIME}
        for t, turn in enumerate(data.get("turn") or [] if isinstance(data, dict) else []):
            for a, action in enumerate((turn or {}).get("actions") or [] if isinstance(turn, dict) else []):
                call = action.get("call") if isinstance(action, dict) else None
                if isinstance(call, str) and "{{" not in call and call not in known:
                    self.problem(step, f"{where} turn[{t}].actions[{a}].call", unknown_tool_message(call, world))


def install_problems(
    task: TaskFile,
    host: PluginHost,
    bundle_dir: Path | None = None,
    *,
    agent: str | None = None,
    model: str | None = None,
    configured_model: str | None = None,
    steps: set[str] | None = None,
    config: Config | None = None,
    model_url: str | None = None,
) -> list[str]:
    """One line per problem a run of `task` would meet with what is installed (empty: it can start)."""
    check = InstallCheck(task, host, bundle_dir, agent, model, configured_model, config=config, model_url=model_url)
    check.steps = steps
    return check.check()
