"""Task files of the reference AgentEnv implementation, read as ours.

Theirs are JSON arrays of steps. The 49 step type names are the same, but most fields differ: a step names
the entities it acts on (`env_id`, `agent_name`, `sandbox_name`, `prompt_id`, `verifier_id`), where ours
name the step that deployed them (`env`, `agent`, `sandbox`, `prompt_step`), and dependencies are
`{"task_step_id": …}` objects. `import_reference_task` resolves those names to step ids, maps every field
that has a counterpart, and lists each field it cannot map (`Imported.unmapped`, one line per field with
the reason); a run of such a file refuses to start while any field is left unmapped, so nothing a task
asks for is silently dropped. `agentenv task import FILE --out task.toml` writes the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COMMON = {"id", "type", "depends_on", "fail_task_on_error", "retry_config", "version"}
SANDBOX_TYPES = {"local": "docker", "docker": "docker", "modal": "modal", "modal_vm": "modal-vm", "e2b": "e2b"}
"""Reference sandbox types → our providers; `local` is a Docker engine on this machine in the reference."""
WORLD_SANDBOXES = {"local": "process", "docker": "docker", "modal": "modal", "e2b": "e2b"}
"""Where `deploy_env` serves a world, by the reference's sandbox type."""
AGGREGATORS = {"all_pass": "all_pass", "any_pass": "any_pass", "weighted_average": "weighted_average"}
RESPONSE_CRITERION_KEYS = {"type", "criterion", "weight", "needles", "pattern"}
SANDBOX_CRITERION_KEYS = {
    "probe_file_exists": {"type", "criterion", "weight", "paths"},
    "probe_dir_exists": {"type", "criterion", "weight", "paths"},
    "probe_file_contains": {"type", "criterion", "weight", "paths", "expected", "value"},
    "bash_cmd_succeeds": {"type", "criterion", "weight", "bash_cmd"},
}
"""The keys of each reference criterion type that have a counterpart; any other key is reported."""


class ReferenceTaskError(ValueError):
    """A reference task file that cannot be read at all (not a list of steps, a step without id/type)."""


@dataclass
class Imported:
    task: dict[str, Any]
    unmapped: list[str] = field(default_factory=list)
    """`step ID (TYPE): field NAME: why`, one per field without a counterpart."""
    notes: list[str] = field(default_factory=list)
    """Fields mapped to the nearest counterpart, not an exact one (said on import, not refused)."""


@dataclass
class _Names:
    """Entity names of the reference task → the ids of the steps that made them."""

    envs: dict[str, str] = field(default_factory=dict)
    agents: dict[str, str] = field(default_factory=dict)
    a2a_agents: dict[str, str] = field(default_factory=dict)
    sandboxes: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    verifiers: dict[str, str] = field(default_factory=dict)
    roundtrip: str | None = None

    @classmethod
    def of(cls, steps: list[dict[str, Any]]) -> _Names:
        names = cls()
        for step in steps:
            kind, sid = step.get("type"), str(step.get("id"))
            if kind == "deploy_env" and step.get("env_id"):
                names.envs.setdefault(str(step["env_id"]), sid)
            if kind in ("deploy_agent", "deploy_human_agent") and step.get("agent_name"):
                names.agents.setdefault(str(step["agent_name"]), sid)
            if kind == "deploy_agent" and step.get("a2a_agent_id"):
                names.a2a_agents.setdefault(str(step["a2a_agent_id"]), sid)
            if kind == "deploy_sandbox" and step.get("sandbox_name"):
                names.sandboxes.setdefault(str(step["sandbox_name"]), sid)
            if kind == "run_docker_container" and step.get("container_name"):
                names.sandboxes.setdefault(str(step["container_name"]), sid)
            if kind == "prompt_agent":
                names.prompts.setdefault(str(step.get("prompt_id") or sid), sid)
            if step.get("verifier_id"):
                names.verifiers.setdefault(str(step["verifier_id"]), sid)
            if kind == "verify_universe_load_export_roundtrip" and names.roundtrip is None:
                names.roundtrip = sid
        return names


class _Step:
    """One reference step being converted: take its fields, write ours, note what has no counterpart."""

    def __init__(self, raw: dict[str, Any], names: _Names, out: Imported, all_steps: list[dict[str, Any]]) -> None:
        self.raw, self.names, self.out, self.all_steps = raw, names, out, all_steps
        self.fields: dict[str, Any] = {}
        self.used: set[str] = set(COMMON)
        self.label = f"step {raw['id']!r} ({raw['type']})"

    def has(self, key: str) -> bool:
        return self.raw.get(key) not in (None, [], {}, "")

    def take(self, key: str) -> Any:
        self.used.add(key)
        return self.raw.get(key)

    def skip(self, key: str, why: str) -> None:
        self.used.add(key)
        if self.has(key):
            self.out.unmapped.append(f"{self.label}: field `{key}`: {why}")

    def put(self, key: str, value: Any) -> None:
        if value not in (None, [], {}):
            self.fields[key] = value

    def ref(self, key: str, table: dict[str, str], what: str) -> str | None:
        """The step id behind the entity name in field `key`, or None (noted) when no step made it."""
        name = self.take(key)
        if name in (None, ""):
            return None
        if str(name) in table:
            return table[str(name)]
        self.out.unmapped.append(f"{self.label}: field `{key}`: no step of this task deploys {what} {name!r}")
        return None

    def env(self, *keys: str) -> str | None:
        """The deploy_env step for `env_id` (or `env_step_id`, already a step id); the only one if unnamed."""
        for key in keys:
            if key == "env_step_id" and self.has(key):
                return str(self.take(key))
            if self.has(key):
                return self.ref(key, self.names.envs, "env")
            self.used.add(key)
        return next(iter(self.names.envs.values())) if len(set(self.names.envs.values())) == 1 else None

    def nested(self, path: str, entry: Any, mapped: set[str], why: str) -> None:
        """Name each key of the object at field `path` (a list entry, a sub-object) that `mapped` leaves out:
        a nested key without a counterpart is reported like a top-level field, never dropped silently."""
        if not isinstance(entry, dict):
            return
        for key in entry:
            if key not in mapped and entry[key] not in (None, [], {}, ""):
                self.out.unmapped.append(f"{self.label}: field `{path}.{key}`: {why}")

    def rest(self) -> None:
        for key in self.raw:
            if key not in self.used and self.has(key):
                why = f"no counterpart in agentenv's {self.raw['type']}"
                self.out.unmapped.append(f"{self.label}: field `{key}`: {why}")


# ---- per step type ------------------------------------------------------------------------------------------
def _deploy_env(s: _Step) -> None:
    env = s.take("env_id")
    s.put("envs", [env] if env else None)
    if s.has("artifact_id"):
        s.put("artifacts", [f"{env}={s.take('artifact_id')}" if env else s.take("artifact_id")])
    s.skip("artifact_version", "artifacts are pinned by content hash (`pins.artifacts`), not by version")
    sandbox = s.take("sandbox_type")
    if sandbox is not None:
        if sandbox in WORLD_SANDBOXES:
            s.put("sandbox", WORLD_SANDBOXES[sandbox])
        else:
            s.out.unmapped.append(f"{s.label}: field `sandbox_type`: {sandbox!r} has no agentenv provider")
    for key in ("env_version", "ttl_seconds", "disk_size_gb", "cpu", "memory_mb", "gateway_mode", "env_state_type",
                "env_state_instance_id", "metadata"):
        s.skip(key, "not a setting of agentenv's deploy_env (worlds are in-process or served by a provider)")


def _deploy_agent(s: _Step) -> None:
    envs = s.take("env_ids") or []
    if s.has("env_step_id"):
        s.put("env", s.take("env_step_id"))
    elif envs:
        s.put("env", s.names.envs.get(str(envs[0])))
        if len(envs) > 1 or str(envs[0]) not in s.names.envs:
            s.out.unmapped.append(f"{s.label}: field `env_ids`: an agent acts in one deployed world here")
    elif len(set(s.names.envs.values())) == 1:
        s.put("env", next(iter(s.names.envs.values())))
    s.take("agent_name")
    s.put("kind", s.take("a2a_agent_id"))
    s.skip("a2a_agent_version", "agent kinds are versioned by their plugin")
    s.put("role", s.take("role"))
    s.put("system_prompt", s.take("system_prompt"))
    s.skip("skills", "give skills with an add_skills step")


def _deploy_human_agent(s: _Step) -> None:
    s.take("agent_name")
    s.put("url", s.take("a2a_url"))
    s.put("env", s.env())


def _deploy_sandbox(s: _Step) -> None:
    s.take("sandbox_name")
    sandbox = s.take("sandbox_type")
    if sandbox is not None and sandbox not in SANDBOX_TYPES:
        s.out.unmapped.append(f"{s.label}: field `sandbox_type`: {sandbox!r} has no agentenv provider")
    s.put("provider", SANDBOX_TYPES.get(str(sandbox)) if sandbox else None)
    spec: dict[str, Any] = {}
    if s.raw.get("sandbox_mode") == "vm" and s.fields.get("provider") == "docker":
        s.out.notes.append(f"{s.label}: field `sandbox_mode`: 'vm' on a local machine runs as a Docker container "
                           "(agentenv has no local VM provider)")
        s.raw = {**s.raw, "sandbox_mode": "container"}
    for ours, theirs in (("mode", "sandbox_mode"), ("image", "image"), ("cpu", "cpu"), ("memory_mb", "memory_mb"),
                         ("ttl_seconds", "ttl_seconds"), ("env", "env_vars")):
        if s.has(theirs):
            spec[ours] = s.take(theirs)
        s.used.add(theirs)
    if s.has("disk_size_gb"):
        spec["disk_mb"] = int(float(s.take("disk_size_gb")) * 1024)
    ports = [*(s.take("exposed_ports") or []), *([s.take("port")] if s.has("port") else [])]
    if ports:
        spec["ports"] = ports
    s.put("spec", spec)
    s.skip("boot_mode", "no counterpart in SandboxSpec")
    s.skip("network_policy", "give `spec.network` in agentenv's shape")
    s.skip("metadata", "sandboxes carry `spec.labels`, not free metadata")


def _install_agent(s: _Step) -> None:
    s.put("sandbox", s.ref("sandbox_name", s.names.sandboxes, "sandbox") or s.ref(
        "container_name", s.names.sandboxes, "container"))
    s.put("agent", s.ref("agent_name", s.names.agents, "agent"))
    s.skip("a2a_agent_id", "agentenv installs from an install declaration (`install` or `declaration`)")
    for key in ("a2a_agent_version", "a2a_port", "workspace_dir"):
        s.skip(key, "no counterpart in agentenv's install_agent")


def _load_artifact(s: _Step) -> None:
    artifact = s.take("artifact_id")
    sources = ("collected_artifacts_step_id", "artifact_from_step_id")
    from_steps = [f"step:{s.take(key)}" for key in sources if s.has(key)]
    file_target = next((key for key in ("sandbox_name", "agent_name", "container_name") if s.has(key)), None)
    if file_target is not None:  # files into a sandbox (or an agent's, or a container's) at a path
        if file_target == "agent_name":
            s.put("agent", s.ref("agent_name", s.names.agents, "agent"))
        else:
            s.put("sandbox", s.ref(file_target, s.names.sandboxes, "sandbox"))
        s.put("artifacts", ([f"file:artifacts/{artifact}"] if artifact else []) + from_steps)
        s.put("path", s.take("destination_path") or (f"/app/{artifact}" if artifact else None))
        s.skip("snapshot_after_load", "only a world is snapshotted after loading")
    else:
        env_step = s.env("env_id", "env_step_id")
        env_name = next((n for n, sid in s.names.envs.items() if sid == env_step), None)
        specs = [artifact] if artifact else []
        for index, entry in enumerate(s.take("artifacts") or []):
            s.nested(f"artifacts.{index}", entry, {"artifact_id"}, "artifacts are named and pinned by content hash")
            specs.append(entry.get("artifact_id") if isinstance(entry, dict) else entry)
        s.put("env", env_step)
        s.put("artifacts", [f"{env_name}={spec}" if env_name else spec for spec in specs if spec] + from_steps)
        s.put("snapshot_after_load", s.take("snapshot_after_load") or None)
        s.skip("destination_path", "a world loads artifacts into its apps, not at a path")
    s.skip("artifact_version", "artifacts are pinned by content hash (`pins.artifacts`)")
    s.skip("urls", "agentenv loads artifacts from the bundle, the object store or earlier steps, not from URLs")


def _env_only(s: _Step) -> None:
    s.put("env", s.env("env_id", "env_step_id"))


def _env_assessment(s: _Step) -> None:
    s.put("env", s.env("env_id"))
    s.put("prompt_step", s.ref("prompt_id", s.names.prompts, "prompt") if s.has("prompt_id") else None)


def _modify_env_tool_access(s: _Step) -> None:
    s.put("env", s.env("env_id"))
    s.put("role", s.take("role"))
    action, tools = s.take("action"), s.take("tools")
    if tools == "*":
        s.out.unmapped.append(f"{s.label}: field `tools`: '*' — name the tools (agentenv changes named tools)")
    elif action in ("enable", "disable"):
        s.put(str(action), list(tools or []))
    else:
        s.out.unmapped.append(f"{s.label}: field `action`: {action!r} (expected enable or disable)")


def _triggers(s: _Step, owner: str | None, owner_key: str) -> None:
    s.put(owner_key, owner)
    from agentenv_runtime.world.reference_triggers import is_reference_trigger, translate

    ours = []
    for index, trigger in enumerate(s.take("triggers") or []):
        if not is_reference_trigger(trigger):
            ours.append(trigger)  # already ours ({id, kind, when, actions}); checked when the step runs
            continue
        translated, problems = translate(trigger, where=f"triggers.{index}")
        s.out.unmapped += [f"{s.label}: field `{problem}" for problem in problems]
        if translated is not None:
            ours.append(translated)
    s.put("triggers", ours)
    unmapped = ["watch_roles", "executor_hours"]
    mapped = ["executor_timeout_seconds", "await_fired", "await_timeout_seconds"]
    if owner_key == "env":  # register_env_triggers: the executor of `nl` actions, and waiting for firings
        s.put("executor_agent", s.ref("executor_agent_name", s.names.agents, "agent"))
        for key in mapped:
            s.put(key, s.take(key))
    else:
        unmapped += ["executor_agent_name", *mapped]
    for key in unmapped:
        s.skip(key, "no counterpart in agentenv's triggers")


def _sync_env_clock(s: _Step) -> None:
    s.put("env", s.env("env_id"))
    s.put("start", s.take("virtual_time"))
    if s.has("virtual_seconds_per_real_second"):
        s.put("mode", "scaled")
        s.put("rate", s.take("virtual_seconds_per_real_second"))
    for key in ("tolerate_missing_sync_time", "timeout_seconds"):
        s.skip(key, "setting the clock of an agentenv world cannot time out")


def _snapshot_env(s: _Step) -> None:
    s.put("env", s.env("env_id", "env_step_id"))
    s.put("name", s.take("snapshot_id") or str(s.raw["id"]))
    for key in ("env_instance_id", "gateway_url", "original_universe_artifact_id", "export_timeout_seconds",
                "include_env_trajectory", "include_env_changes"):
        s.skip(key, "no counterpart in agentenv's snapshot_env")


def _prompt_agent(s: _Step) -> None:
    s.take("prompt_id")
    s.put("agent", s.ref("agent_name", s.names.agents, "agent") or _only(s.names.agents))
    prompt = s.take("prompt")
    parts = s.take("parts") or []
    texts = [str(p["text"]) for p in parts if isinstance(p, dict) and p.get("kind", "text") == "text" and p.get("text")]
    for index, part in enumerate(parts):
        if isinstance(part, dict) and part.get("kind", "text") == "text":
            s.nested(f"parts.{index}", part, {"kind", "text"}, "a text part becomes plain prompt text")
    if len(texts) != len(parts):
        s.out.unmapped.append(f"{s.label}: field `parts`: only text parts have a counterpart (`prompt`)")
    s.put("prompt", "\n".join([str(prompt), *texts] if prompt else texts) or None)
    s.put("max_turns", s.take("max_turns") or s.take("max_conversation_turns"))


def _only(table: dict[str, str]) -> str | None:
    return next(iter(table.values())) if len(set(table.values())) == 1 else None


def _review(s: _Step) -> None:
    s.put("message", s.take("label"))
    s.put("timeout", s.take("timeout_seconds"))
    s.put("poll_seconds", s.take("poll_interval_seconds"))


def _teardown(s: _Step) -> None:
    targets = []
    for key, table, what in (("env_ids", s.names.envs, "env"), ("agent_names", s.names.agents, "agent"),
                             ("sandbox_names", s.names.sandboxes, "sandbox")):
        for index, name in enumerate(s.take(key) or []):
            if str(name) in table:
                targets.append(table[str(name)])
            else:
                s.out.unmapped.append(f"{s.label}: field `{key}.{index}`: no step of this task deploys {what} {name!r}")
    s.put("targets", targets)


def _peer_agents(s: _Step) -> None:
    peers: dict[str, list[str]] = {}
    for index, peering in enumerate(s.take("peerings") or []):
        s.nested(f"peerings.{index}", peering, {"agent_name", "peers"}, "a peering here is {agent_name, peers}")
        agent = s.names.agents.get(str(peering.get("agent_name")))
        others = [s.names.agents.get(str(p)) for p in peering.get("peers") or []]
        if agent is None or None in others:
            s.out.unmapped.append(f"{s.label}: field `peerings`: {peering} names an agent no step deploys")
            continue
        peers[agent] = [o for o in others if o]
    s.put("peers", peers)


def _add_skills(s: _Step) -> None:
    s.put("agent", s.ref("agent_name", s.names.agents, "agent") or _only(s.names.agents))
    skills = s.take("skills") or []
    if all(isinstance(k, dict) and "name" in k for k in skills):
        s.put("skills", skills)
    else:
        s.out.unmapped.append(f"{s.label}: field `skills`: stored skill ids; give {{name, text|store|cli}} skills")
    s.skip("cli_artifact_ids", "name the build_mcp_cli step in a skill's `cli`")
    s.skip("file_artifact_universe_ids", "no counterpart")


def _agent_ref(s: _Step, key: str = "agent_name") -> None:
    s.put("agent", s.ref(key, s.names.agents, "agent") or _only(s.names.agents))


def _snapshot_agent_state(s: _Step) -> None:
    _agent_ref(s)
    s.put("name", s.take("artifact_id"))
    for key in ("prompt_id", "env_id", "universe_artifact_id", "timeout_seconds"):
        s.skip(key, "no counterpart in agentenv's snapshot_agent_state")


def _collect_artifacts(s: _Step) -> None:
    source = None
    for key, table in (("sandbox_name", s.names.sandboxes), ("container_name", s.names.sandboxes),
                       ("agent_name", s.names.agents)):
        if s.has(key) and source is None:
            source = s.ref(key, table, key.removesuffix("_name"))
        s.used.add(key)
    s.put("source", source)
    base = s.take("base_path")
    paths = [str(p) for p in s.take("artifact_paths") or []]
    s.put("paths", [f"{base.rstrip('/')}/{p}" if base and not p.startswith("/") else p for p in paths])
    for key in ("artifacts_key", "env_id", "manifest_step_id", "exclude_basenames", "universe_id_suffix"):
        s.skip(key, "no counterpart in agentenv's collect_artifacts")


def _build_mcp_cli(s: _Step) -> None:
    s.put("env", s.env("env_id"))
    s.put("name", s.take("command_name"))
    s.skip("cli_artifact_id", "the CLI is stored as cli/<name>.py")


def _run_code(s: _Step) -> None:
    script = s.take("script_file") or s.take("script_artifact_id")
    s.used |= {"script_file", "script_artifact_id"}
    s.put("script", script)
    s.put("input", s.take("args"))
    s.put("timeout", s.take("timeout_seconds"))
    s.put("sandbox", s.ref("sandbox_name", s.names.sandboxes, "sandbox") if s.has("sandbox_name") else None)
    if s.take("entrypoint") not in (None, "run"):
        s.out.unmapped.append(f"{s.label}: field `entrypoint`: agentenv calls the script's run(input)")
    for key in ("script_artifact_version", "result_id", "env_id", "agent_name"):
        s.skip(key, "no counterpart in agentenv's run_code")


def _run_docker_container(s: _Step) -> None:
    s.take("container_name")
    context = s.take("docker_context_artifact_id")
    s.put("context", f"artifacts/{context}" if context else None)
    s.put("tag", s.take("image_tag"))
    s.put("dockerfile", s.take("dockerfile_path"))
    s.put("ports", s.take("ports"))
    s.put("env", s.take("env_vars"))
    s.put("command", s.take("command_override"))
    for key in ("sandbox_name", "docker_context_artifact_version", "docker_context_url", "build_args",
                "keep_alive_with_base_command", "network", "extra_networks", "ready_command", "devices", "cap_add",
                "privileged", "volumes", "shm_size"):
        s.skip(key, "no counterpart in agentenv's run_docker_container")


def _unit_tests(s: _Step) -> None:
    s.put("sandbox", s.ref("container_name", s.names.sandboxes, "container") if s.has("container_name")
          else s.ref("sandbox_name", s.names.sandboxes, "sandbox"))
    s.used |= {"container_name", "sandbox_name", "verifier_id"}
    setup = [str(c) for c in s.take("setup_commands") or []]
    command = s.take("command")
    s.put("command", " && ".join([*setup, str(command)]) if setup and command else command)
    s.put("timeout", s.take("timeout_sec"))
    s.put("reward_file", s.take("reward_path"))
    for key in ("user", "env_vars", "result_paths"):
        s.skip(key, "no counterpart in agentenv's run_container_unit_tests_verifier")


def _verify_sandbox(s: _Step) -> None:
    s.put("sandbox", s.ref("sandbox_name", s.names.sandboxes, "sandbox") or _only(s.names.sandboxes))
    s.take("verifier_id")
    base = str(s.take("base_dir") or "")
    timeout = s.take("shell_timeout_seconds")
    checks = []
    for index, criterion in enumerate(s.take("criteria") or []):
        kind, weight = criterion.get("type"), criterion.get("weight", 1.0)
        name = str(criterion.get("criterion") or f"{kind} {index}")
        if kind in SANDBOX_CRITERION_KEYS:
            s.nested(f"criteria.{index}", criterion, SANDBOX_CRITERION_KEYS[kind], f"no counterpart in a {kind} check")
        paths = [p if str(p).startswith("/") or not base else f"{base.rstrip('/')}/{p}" for p in criterion.get("paths")
                 or []]
        if kind in ("probe_file_exists", "probe_dir_exists"):
            probe = "file_exists" if kind == "probe_file_exists" else "dir_exists"
            checks += [{"name": name, "weight": weight, probe: p} for p in paths]
        elif kind == "probe_file_contains":
            needle = re.escape(str(criterion.get("expected") or criterion.get("value") or ""))
            checks += [{"name": name, "weight": weight, "file_matches": p, "regex": needle} for p in paths]
        elif kind == "bash_cmd_succeeds":
            command = f"cd {base} && {criterion.get('bash_cmd')}" if base else criterion.get("bash_cmd")
            check = {"name": name, "weight": weight, "command": command}
            checks.append(check | ({"timeout": timeout} if timeout else {}))
        else:
            s.out.unmapped.append(f"{s.label}: field `criteria.{index}`: criterion type {kind!r} has no counterpart")
    s.put("checks", checks)
    s.skip("agent_name", "checks run in a deployed sandbox (`sandbox`)")
    s.skip("score_aggregator", "verify_sandbox scores by weighted average")


def _response_verifier(s: _Step) -> None:
    s.put("prompt_step", s.ref("prompt_id", s.names.prompts, "prompt") or _only(s.names.prompts))
    s.take("verifier_id")
    checks = []
    for index, criterion in enumerate(s.take("criteria") or []):
        kind, name = criterion.get("type"), str(criterion.get("criterion") or f"criterion {index}")
        weight = {"weight": criterion["weight"]} if criterion.get("weight") is not None else {}
        if kind in ("response_contains", "response_regex_present"):
            s.nested(f"criteria.{index}", criterion, RESPONSE_CRITERION_KEYS, f"no counterpart in a {kind} check")
        if kind == "response_contains":
            needles = criterion.get("needles") or []
            checks += [{"name": name, "contains": str(n), "case_sensitive": True} | weight for n in needles]
        elif kind == "response_regex_present":
            checks.append({"name": name, "regex": str(criterion.get("pattern"))} | weight)
        else:
            s.out.unmapped.append(f"{s.label}: field `criteria.{index}`: criterion type {kind!r} has no counterpart")
    s.put("checks", checks)
    s.skip("score_aggregator", "agent_prompt_response_verifier scores by weighted average")


def _rubrics(s: _Step) -> None:
    named = s.ref("prompt_id", s.names.prompts, "prompt") if s.has("prompt_id") else _only(s.names.prompts)
    s.put("prompt_step", named)
    s.take("verifier_id")
    criteria = []
    for index, criterion in enumerate(s.take("criteria") or []):
        text = criterion.get("criterion") or criterion.get("description") if isinstance(criterion, dict) else criterion
        if not text:
            s.out.unmapped.append(f"{s.label}: field `criteria.{index}`: no criterion text")
            continue
        weight = criterion.get("weight", 1.0) if isinstance(criterion, dict) else 1.0
        s.nested(f"criteria.{index}", criterion, {"criterion", "description", "weight", "id"},
                 "a rubric criterion here is {name, weight, description}")
        criteria.append({"name": str(criterion.get("id") if isinstance(criterion, dict) and criterion.get("id")
                                     else f"criterion-{index + 1}"), "weight": weight, "description": str(text)})
    s.put("criteria", criteria)
    s.put("timeout", s.take("judge_timeout_seconds"))
    for key in set(s.raw) - s.used:
        s.skip(key, "agentenv's rubrics_verifier takes its judge from the [model] config")


def _env_outcome(s: _Step) -> None:
    s.put("env", s.env("env_id"))
    s.take("verifier_id")
    s.skip("file_artifact_id", "the reference verify(mcp_url) contract differs: give `script` with verify(world)")
    for key in ("file_artifact_version", "score_aggregator", "prompt_id"):
        s.skip(key, "no counterpart in agentenv's env_outcome_verifier")


def _aggregate(s: _Step) -> None:
    ids = [s.names.verifiers.get(str(v)) for v in s.take("verifier_ids") or []]
    if None in ids:
        s.out.unmapped.append(f"{s.label}: field `verifier_ids`: names a verifier no step of this task writes")
    s.put("verifiers", [i for i in ids if i])
    method = s.take("score_aggregator")
    s.put("method", AGGREGATORS.get(str(method)) if method else None)
    if method and method not in AGGREGATORS:
        s.out.unmapped.append(f"{s.label}: field `score_aggregator`: {method!r} has no counterpart")
    s.take("verifier_id")


def _gate(s: _Step) -> None:
    s.take("env_id")
    gates = [str(g) for g in s.take("required_gates") or []]
    steps = {str(step.get("id")) for step in s.all_steps}
    for index, gate in enumerate(gates):
        if gate not in s.names.verifiers and gate not in steps:
            s.out.unmapped.append(f"{s.label}: field `required_gates.{index}`: no step of this task is {gate!r} "
                                  "or writes a verifier of that id")
    s.put("validators", [s.names.verifiers.get(g, g) for g in gates])


def _combine(s: _Step) -> None:
    s.take("env_id")
    judge = s.take("judge_verifier_id")
    s.put("judge", s.names.verifiers.get(str(judge)))
    if judge not in (None, "") and str(judge) not in s.names.verifiers:
        s.out.unmapped.append(f"{s.label}: field `judge_verifier_id`: no step of this task writes verifier {judge!r}")
    s.put("roundtrip", s.names.roundtrip)
    for key in ("universe_artifact_id", "universe_artifact_version"):
        s.skip(key, "name the verify_universe_load_export_roundtrip step (`roundtrip`)")


def _roundtrip(s: _Step) -> None:
    s.put("env", s.env("env_id"))
    if s.has("universe_artifact_id"):
        s.put("artifacts", [s.take("universe_artifact_id")])
    for key in ("universe_artifact_version", "emit_file_artifact_universe", "persist_result"):
        s.skip(key, "no counterpart in agentenv's roundtrip check")


def _agent_validator(s: _Step) -> None:
    s.put("agent", s.ref("a2a_agent_id", s.names.a2a_agents, "A2A agent"))
    for key in set(s.raw) - s.used:
        s.skip(key, f"no counterpart in agentenv's {s.raw['type']}")


def _apply_server_config(s: _Step) -> None:
    s.put("env", s.env("env_id"))
    directives = s.take("directives")
    if isinstance(directives, dict):
        s.put("directives", directives)
    elif directives:
        s.out.unmapped.append(f"{s.label}: field `directives`: give an object of directives")
    for key in ("timeout_seconds", "tolerate_unadvertised"):
        s.skip(key, "no counterpart in agentenv's apply_server_config")


CONVERTERS: dict[str, Callable[[_Step], None]] = {
    "deploy_env": _deploy_env,
    "deploy_agent": _deploy_agent,
    "deploy_human_agent": _deploy_human_agent,
    "deploy_sandbox": _deploy_sandbox,
    "install_agent": _install_agent,
    "run_docker_container": _run_docker_container,
    "reset_env": _env_only,
    "teardown_sandboxes": _teardown,
    "peer_agents": _peer_agents,
    "prompt_agent": _prompt_agent,
    "add_skills": _add_skills,
    "review": _review,
    "load_artifact": _load_artifact,
    "apply_server_config": _apply_server_config,
    "modify_env_tool_access": _modify_env_tool_access,
    "register_env_triggers": lambda s: _triggers(s, s.env("env_id"), "env"),
    "register_agent_triggers": lambda s: _triggers(s, s.ref("agent_name", s.names.agents, "agent"), "agent"),
    "sync_env_clock": _sync_env_clock,
    "snapshot_env": _snapshot_env,
    "snapshot_agent_state": _snapshot_agent_state,
    "collect_artifacts": _collect_artifacts,
    "build_mcp_cli": _build_mcp_cli,
    "run_code": _run_code,
    "rubrics_verifier": _rubrics,
    "env_outcome_verifier": _env_outcome,
    "agent_prompt_response_verifier": _response_verifier,
    "verify_sandbox": _verify_sandbox,
    "run_container_unit_tests_verifier": _unit_tests,
    "aggregate_verifiers": _aggregate,
    "verify_mcp_tool_schema": _env_only,
    "verify_spec_conformance": _env_only,
    "verify_mcp_env_assessment": _env_assessment,
    "validation_gate_aggregator": _gate,
    "verify_env_card": _env_only,
    "verify_env_core_protocol": _env_only,
    "verify_universe_load_export_roundtrip": _roundtrip,
    "combine_universe_verdicts": _combine,
    **{
        name: _agent_validator
        for name in (
            "verify_a2a_agent_card", "verify_a2a_agent_config_identity", "verify_a2a_agent_mcp",
            "verify_a2a_core_protocol", "verify_a2a_modalities", "verify_a2a_peer_agents", "verify_a2a_install",
            "verify_a2a_skill_config", "verify_a2a_snapshot", "verify_a2a_trajectory", "verify_a2a_role",
            "verify_a2a_system_prompt",
        )
    },
}


def _dependencies(s: _Step) -> list[str] | None:
    raw = s.raw.get("depends_on")
    if raw is None:
        return None
    deps = []
    for entry in raw if isinstance(raw, list) else [raw]:
        dep = entry.get("task_step_id") if isinstance(entry, dict) else entry
        if not isinstance(dep, str):
            s.out.unmapped.append(f"{s.label}: field `depends_on`: {entry!r} is not a step id or {{task_step_id}}")
            continue
        deps.append(dep)
    return deps


def _common(s: _Step) -> dict[str, Any]:
    step: dict[str, Any] = {"id": str(s.raw["id"]), "type": s.raw["type"]}
    deps = _dependencies(s)
    if deps is not None:
        step["depends_on"] = deps
    if "fail_task_on_error" in s.raw:
        step["fail_task_on_error"] = bool(s.raw["fail_task_on_error"])
    retry = s.raw.get("retry_config")
    if isinstance(retry, dict):
        s.nested("retry_config", retry, {"retry_from_step_id", "go_to_step_id", "max_retries"},
                 "a retry here is {from, times}")
        target = retry.get("retry_from_step_id", retry.get("go_to_step_id"))
        step["retry"] = {"from": target, "times": int(retry.get("max_retries", 1))}
    return step


def _declare_roles(out: Imported) -> None:
    """Declare on its deploy_env step each role a tool-access change of the task names: the reference serves a role
    no rule names every tool, where agentenv refuses a role its world does not define (never 0 tools silently),
    so the import writes the reference's meaning out: `roles.NAME = {tools = ["*"]}`, the change applied on top."""
    deploys = {step["id"]: step for step in out.task["steps"] if step["type"] == "deploy_env"}
    for step in out.task["steps"]:
        changes = [step] if step["type"] == "modify_env_tool_access" else []
        if step["type"] == "register_env_triggers":
            changes = [a["set_tool_access"] for t in step.get("triggers", []) for a in t.get("actions", [])
                       if isinstance(a, dict) and isinstance(a.get("set_tool_access"), dict)]
        deploy = deploys.get(str(step.get("env")))
        for change in changes:
            role = change.get("role")
            if deploy is None or not isinstance(role, str) or role in deploy.get("roles", {}):
                continue
            deploy.setdefault("roles", {})[role] = {"tools": ["*"]}
            out.notes.append(f"step {deploy['id']!r} (deploy_env): field `roles.{role}`: declared with every tool, "
                             f"the reference's meaning of a role before step {step['id']!r} changes it")


def import_reference_task(steps: Any, *, name: str, source: str = "<memory>") -> Imported:
    """Our task (a dict for `TaskFile`) from the reference's list of steps, and what could not be mapped."""
    if not isinstance(steps, list) or not steps:
        raise ReferenceTaskError(f"{source}: a reference task file is a non-empty JSON array of steps")
    for index, raw in enumerate(steps):
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not isinstance(raw.get("type"), str):
            raise ReferenceTaskError(f"{source}: steps[{index}]: each step is an object with string `id` and `type`")
    names = _Names.of(steps)
    out = Imported(task={"name": name, "description": f"imported from {source}", "steps": []})
    for raw in steps:
        convert = CONVERTERS.get(raw["type"])
        step = _Step(raw, names, out, steps)
        if convert is None:
            out.unmapped.append(f"{step.label}: the step type has no counterpart in agentenv")
            continue
        common = _common(step)
        convert(step)
        step.rest()
        out.task["steps"].append(common | {"type": step.raw["type"]} | step.fields)
    _declare_roles(out)
    if raw_version := [s["id"] for s in steps if s.get("version") not in (None, 0, 1)]:
        out.unmapped.append(f"steps {raw_version}: field `version`: stored step versions have no counterpart")
    return out


def read_reference_task(path: Path, data: Any) -> Imported:
    return import_reference_task(data, name=path.stem, source=str(path))
