"""`agentenv run --dry-run`: what a run would meet, checked before anything starts.

Preflight (each step type's own field checks) sees one step's settings and the step ids. A dry run also sees
what is installed and what the bundle holds, so it answers what preflight cannot: do the envs a world names
exist (or are they broken, and why), do its artifacts exist, are the agent kinds and trigger kinds installed,
and do the tools each scripted policy calls exist in the world it acts in, as the composed world names them.
It reads the fields of the lifecycle step types by name (`deploy_env`, `register_env_triggers`,
`deploy_agent`) and a scripted policy's `turn[].actions[].call`, the formats their plugins document; a step
type it does not know is left to its preflight.

This is the one place the engine checks a task against the install; keep new checks of that kind here.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv.contracts import kinds
from agentenv.plugins.host import PluginHost

from agentenv_runtime.engine.task import StepDecl, TaskFile
from agentenv_runtime.world.build import broken_reason, env_class, split_names
from agentenv_runtime.world.world import GET_TIME, World, WorldError, unknown_tool_message

POLICY_SUFFIXES = (".toml", ".json")
STORE_PREFIX = "store:"


def missing(host: PluginHost, kind: Any, name: str) -> str | None:
    """None when `name` is a usable contribution of `kind`; else why not, naming what is installed."""
    broken = broken_reason(host, kind, name)
    if broken is not None:
        return broken
    if name in host.registry(kind):
        return None
    installed = ", ".join(sorted(host.usable(kind))) or "none installed"
    return f"no {kind.label} {name!r} (installed: {installed}); see `agentenv plugin list`"


@dataclass
class DryRun:
    task: TaskFile
    host: PluginHost
    bundle_dir: Path | None
    overrides: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    worlds: dict[str, World] = field(default_factory=dict)
    """deploy_env step id → a world of the same envs and roles (empty, for tool names)."""

    @property
    def base(self) -> Path:
        return self.bundle_dir if self.bundle_dir is not None else self.task.path.parent

    def problem(self, step: StepDecl, where: str, message: str) -> None:
        self.problems.append(f"{self.task.path}: step {step.id!r} ({step.type}): {where}: {message}")

    def check(self) -> list[str]:
        checks = {"deploy_env": self.deploy_env, "register_env_triggers": self.triggers, "deploy_agent": self.agent}
        for step in self.task.steps:
            check = checks.get(step.type)
            if check is not None:
                check(step, step.fields)
        return self.problems

    # ---- worlds --------------------------------------------------------------------------------------
    def deploy_env(self, step: StepDecl, fields: dict[str, Any]) -> None:
        names = split_names(fields.get("envs") or [])
        settings = fields.get("settings") or {}
        envs = []
        for name in names:
            why = missing(self.host, kinds.ENVS, name)
            if why:
                self.problem(step, "field `envs`", why)
                continue
            try:
                envs.append(env_class(self.host, name)(settings.get(name)))
            except WorldError as exc:
                self.problem(step, "field `envs`", str(exc))
            except ValueError as exc:  # the env's Settings refused them
                self.problem(step, f"field `settings.{name}`", " ".join(str(exc).split()))
        if len(envs) != len(names):
            return
        try:
            world = World(envs, roles=fields.get("roles") or {})
        except WorldError as exc:
            self.problem(step, "field `envs`", str(exc))
            return
        self.worlds[step.id] = world
        specs = fields.get("artifacts") or []
        for index, spec in enumerate([specs] if isinstance(specs, str) else specs):
            why = self.artifact_problem(world, str(spec))
            if why:
                self.problem(step, f"field `artifacts[{index}]`", why)

    def artifact_problem(self, world: World, spec: str) -> str | None:
        target, _, name = spec.partition("=")
        if spec.startswith(STORE_PREFIX) or name.startswith(STORE_PREFIX):
            return None  # in the object store: only the run can look
        if name:
            if target not in world.envs:
                return f"{spec!r}: the world has no env {target!r} (envs: {', '.join(world.envs)})"
            env = world.envs[target]
            if name in env.artifact_paths() or (self.base / name).is_file():
                return None
            packaged = ", ".join(sorted(env.artifact_paths())) or "none"
            file = self.base / name
            return f"{spec!r}: {target} ships no artifact {name!r} (packaged: {packaged}) and there is no file {file}"
        if any(spec in env.artifact_paths() for env in world.envs.values()) or (self.base / spec).is_file():
            return None
        shipped = {env.name: sorted(env.artifact_paths()) for env in world.envs.values()}
        return f"{spec!r}: no env of the world ships it (shipped: {shipped}); use ENV=PATH for a file"

    def world_of(self, step: StepDecl, fields: dict[str, Any]) -> World | None:
        return self.worlds.get(str(fields.get("env", "")))

    # ---- triggers ------------------------------------------------------------------------------------
    def triggers(self, step: StepDecl, fields: dict[str, Any]) -> None:
        world = self.world_of(step, fields)
        for index, trigger in enumerate(fields.get("triggers") or []):
            if not isinstance(trigger, dict):
                continue  # preflight says what a trigger looks like
            kind = str(trigger.get("kind", ""))
            why = missing(self.host, kinds.TRIGGER_KINDS, kind)
            if why:
                self.problem(step, f"field `triggers[{index}].kind`", why)
            for position, action in enumerate(trigger.get("actions") or []):
                call = (action or {}).get("call_tool") if isinstance(action, dict) else None
                tool = call.get("tool") if isinstance(call, dict) else None
                if world is not None and isinstance(tool, str) and tool not in world.tools and tool != GET_TIME:
                    where = f"field `triggers[{index}].actions[{position}].call_tool.tool`"
                    self.problem(step, where, unknown_tool_message(tool, world))

    # ---- agents --------------------------------------------------------------------------------------
    def agent(self, step: StepDecl, fields: dict[str, Any]) -> None:
        registered = self.host.registry(kinds.AGENT_KINDS)
        wanted = self.overrides.get("agent")
        policy: Path | None = None
        if wanted and wanted not in registered:
            policy = self.bundle_agent(str(wanted))
            if policy is None:
                self.problem(
                    step,
                    "--agent",
                    f"{wanted!r} is neither an agent kind ({', '.join(sorted(registered)) or 'none installed'}) "
                    f"nor a policy file agents/{wanted}.toml or .json in {self.base}",
                )
                return
        kind = fields.get("kind") or (wanted if wanted in registered else None) or "scripted"
        why = missing(self.host, kinds.AGENT_KINDS, str(kind))
        if why:
            self.problem(step, "field `kind`" if fields.get("kind") else "agent kind", why)
            return
        settings = fields.get("settings") or {}
        if policy is None and kind == "scripted" and isinstance(settings.get("policy"), str):
            policy = self.base / settings["policy"]
            if not policy.is_file():
                self.problem(step, "field `settings.policy`", f"no policy file {policy}")
                return
        world = self.world_of(step, fields)
        if policy is not None and kind == "scripted" and world is not None:
            self.policy_tools(step, policy, world)

    def bundle_agent(self, name: str) -> Path | None:
        candidates = [name] if name.endswith(POLICY_SUFFIXES) else []
        candidates += [f"agents/{name}{suffix}" for suffix in POLICY_SUFFIXES]
        return next((self.base / c for c in candidates if (self.base / c).is_file()), None)

    def policy_tools(self, step: StepDecl, policy: Path, world: World) -> None:
        """Every `call` of a scripted policy names a tool of the world, as composition names it. Whether the
        agent's role may call it is not checked: rules and steps change access mid-run, and a policy may try a
        refused call on purpose."""
        try:
            text = policy.read_text(encoding="utf-8")
            data = tomllib.loads(text) if policy.suffix == ".toml" else json.loads(text)
        except (OSError, ValueError) as exc:
            self.problem(step, f"policy {policy}", f"cannot be read: {exc}")
            return
        known = set(world.tools) | {GET_TIME}
        for t, turn in enumerate(data.get("turn") or [] if isinstance(data, dict) else []):
            for a, action in enumerate((turn or {}).get("actions") or [] if isinstance(turn, dict) else []):
                call = action.get("call") if isinstance(action, dict) else None
                if isinstance(call, str) and "{{" not in call and call not in known:
                    self.problem(step, f"{policy.name} turn[{t}].actions[{a}].call", unknown_tool_message(call, world))


def dry_run_problems(
    task: TaskFile, host: PluginHost, bundle_dir: Path | None = None, overrides: dict[str, Any] | None = None
) -> list[str]:
    """One line per problem a run of `task` would meet with what is installed (empty: it can start)."""
    return DryRun(task, host, bundle_dir, dict(overrides or {})).check()
