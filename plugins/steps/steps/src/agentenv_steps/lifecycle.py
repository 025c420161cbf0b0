"""Lifecycle steps beyond deploy: a human operator's A2A endpoint as an agent, installing an agent into a
sandbox, tearing things down mid-run, and telling agents which peers they may message."""

from __future__ import annotations

import asyncio
import json
import threading
import tomllib
from pathlib import Path
from typing import Any

from agentenv.contracts import StepContext, StepFailed, kinds
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentenv_steps._common import CoreStep, StepSettings, StrList, deployed_world, missing_step
from agentenv_steps._produced import file_contents
from agentenv_steps._refs import TornDown, deployed_agent, sandbox_of
from agentenv_steps.agents import DeployedAgent

CARD_PATH = "/.well-known/agent-card.json"


# ---- deploy_human_agent -----------------------------------------------------------------------------
class DeployHumanAgentSettings(StepSettings):
    url: str = Field(
        pattern=r"^https?://", description="Base URL of the operator's A2A endpoint (card at /.well-known/…)."
    )
    env: str = Field(description="The deploy_env step whose trajectory records the conversation with the operator.")
    role: str = Field("default", min_length=1, description="The role the operator acts as in that world.")
    timeout: float = Field(600.0, gt=0, description="Seconds one prompt may wait for the operator's answer.")
    card_timeout: float = Field(10.0, gt=0, description="Seconds to wait for the agent card.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers for every request (auth).")


class DeployHumanAgent(CoreStep[DeployHumanAgentSettings]):
    name = "deploy_human_agent"
    description = "Register a human operator's A2A endpoint as an agent that prompts and peers can talk to."
    Settings = DeployHumanAgentSettings
    creates_resources = True

    def check(self, settings: DeployHumanAgentSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env")

    async def execute(self, settings: DeployHumanAgentSettings, ctx: StepContext) -> dict[str, Any]:
        step_id = self.own_id(ctx)
        world: World = deployed_world(ctx, settings.env)
        if settings.role not in world.rbac.roles:
            raise StepFailed(f"field `role`: world {world.name!r} has no role {settings.role!r}")
        base = settings.url.rstrip("/")
        card = await fetch_card(base, settings.headers, settings.card_timeout)
        problems = card_problems(card)
        if problems:
            raise StepFailed(f"field `url`: the agent card at {base}{CARD_PATH} is not usable: {'; '.join(problems)}")
        try:
            kind_cls = ctx.host.get(kinds.AGENT_KINDS, "a2a")
        except LookupError:
            raise StepFailed(
                "the `a2a` agent kind is not installed, so the operator cannot be talked to; "
                "fix: agentenv plugin add agentenv-a2a"
            ) from None
        agent = kind_cls(
            kind_cls.Settings.model_validate({"url": base, "timeout": settings.timeout, "headers": settings.headers})
        )
        deployed = DeployedAgent(agent, world.tool_access(settings.role), settings.role, settings.env, "a2a", world)
        deployed.agent.card = card  # what the operator's endpoint says about itself, for later steps
        ctx.add_resource(step_id, deployed, None)
        return {
            "kind": "a2a",
            "url": base,
            "name": card.get("name"),
            "version": card.get("version"),
            "skills": [skill.get("name") or skill.get("id") for skill in card.get("skills") or []],
        }


async def fetch_card(base: str, headers: dict[str, str], timeout: float) -> dict[str, Any]:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout, headers=headers) as client:
            response = await client.get(base + CARD_PATH)
    except httpx.HTTPError as exc:
        raise StepFailed(f"field `url`: cannot reach {base}{CARD_PATH}: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise StepFailed(
            f"field `url`: {base}{CARD_PATH} answered HTTP {response.status_code}; is this an A2A endpoint?"
        )
    try:
        card = response.json()
    except ValueError:
        raise StepFailed(f"field `url`: {base}{CARD_PATH} is not JSON") from None
    if not isinstance(card, dict):
        raise StepFailed(f"field `url`: {base}{CARD_PATH} is not a JSON object")
    return card


def card_problems(card: dict[str, Any]) -> list[str]:
    """What a card lacks for an agent others can talk to: a name, a version, an interface URL, text input."""
    problems = [f"`{key}` is missing" for key in ("name", "version") if not card.get(key)]
    interfaces = card.get("supportedInterfaces") or card.get("additionalInterfaces") or []
    if not card.get("url") and not any(isinstance(i, dict) and i.get("url") for i in interfaces):
        problems.append("no interface URL (`supportedInterfaces[].url` or `url`)")
    modes = card.get("defaultInputModes")
    if modes is not None and not any(str(mode).startswith("text") for mode in modes):
        problems.append(f"`defaultInputModes` {modes} accepts no text, so it cannot be prompted")
    if not isinstance(card.get("skills", []), list):
        problems.append("`skills` is not a list")
    return problems


# ---- install_agent ----------------------------------------------------------------------------------
class InstallDeclaration(BaseModel):
    """How an agent is installed: files to write, then commands to run (each must exit 0)."""

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(
        default_factory=dict,
        description="Path in the sandbox → content, or `file:REL` for a file or folder of the bundle.",
    )
    commands: list[str | list[str]] = Field(
        default_factory=list, description="Commands run in order: a string runs with `sh -c`, a list as argv."
    )


class InstallAgentSettings(StepSettings):
    sandbox: str = Field(description="The step whose sandbox receives the agent (deploy_sandbox, …).")
    install: InstallDeclaration | None = Field(None, description="The install declaration inline.")
    declaration: str | None = Field(
        None, description="A TOML or JSON file holding the install declaration, relative to the bundle."
    )
    agent: str | None = Field(
        None, description="A deploy_agent step now living in that sandbox (collect_artifacts can then name it)."
    )
    timeout: float = Field(300.0, gt=0, description="Seconds each command may run.")

    @field_validator("declaration")
    @classmethod
    def _suffix(cls, value: str | None) -> str | None:
        if value is not None and not value.endswith((".toml", ".json")):
            raise ValueError(f"{value!r}: a declaration file is .toml or .json")
        return value


class InstallAgent(CoreStep[InstallAgentSettings]):
    name = "install_agent"
    description = "Install an agent into an existing sandbox from its install declaration (files, then commands)."
    Settings = InstallAgentSettings

    def check(self, settings: InstallAgentSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = missing_step("sandbox", settings.sandbox, step_ids, "deploy_sandbox")
        problems += missing_step("agent", settings.agent, step_ids, "deploy_agent")
        if (settings.install is None) == (settings.declaration is None):
            problems.append(("install", "give exactly one of `install` (inline) or `declaration` (a file)"))
        return problems

    async def execute(self, settings: InstallAgentSettings, ctx: StepContext) -> dict[str, Any]:
        box = sandbox_of(ctx, settings.sandbox, "sandbox")
        declaration = settings.install or read_declaration(ctx.resolve_path(str(settings.declaration)))
        written: list[str] = []
        for target, value in declaration.files.items():
            for path, data in file_contents(target, value, ctx):
                try:
                    await asyncio.to_thread(box.put_file, path, data)
                except (OSError, ValueError, RuntimeError) as exc:
                    raise StepFailed(f"field `install.files.{target}`: could not write {path}: {exc}") from None
                written.append(path)
        ran = []
        for index, command in enumerate(declaration.commands):
            argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
            result = await asyncio.to_thread(box.exec, argv, timeout=settings.timeout)
            ran.append({"command": command, "exit_code": result.exit_code})
            if result.exit_code != 0:
                tail = (result.stderr or result.stdout).strip()[-800:]
                raise StepFailed(
                    f"field `install.commands[{index}]`: {command!r} exited with {result.exit_code}; output:\n{tail}"
                )
        if settings.agent is not None:
            deployed_agent(ctx, settings.agent).sandbox = box
        return {"sandbox": getattr(box, "id", settings.sandbox), "files": written, "commands": ran}


def read_declaration(path: Path) -> InstallDeclaration:
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except FileNotFoundError:
        raise StepFailed(f"field `declaration`: no file {path}") from None
    except (OSError, ValueError) as exc:
        raise StepFailed(f"field `declaration`: cannot read {path}: {exc}") from None
    try:
        return InstallDeclaration.model_validate(data.get("install", data))
    except ValueError as exc:
        raise StepFailed(f"field `declaration`: {path}: {exc}") from None


# ---- teardown_sandboxes -----------------------------------------------------------------------------
class TeardownSandboxesSettings(StepSettings):
    targets: StrList = Field(
        min_length=1, description="Steps whose sandboxes, worlds or agents to tear down now (their own teardowns)."
    )


class TeardownSandboxes(CoreStep[TeardownSandboxesSettings]):
    name = "teardown_sandboxes"
    description = "Tear down named steps' sandboxes, worlds or agents mid-run; never fails the task."
    Settings = TeardownSandboxesSettings

    def check(self, settings: TeardownSandboxesSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        what = "deploy_sandbox, deploy_env or deploy_agent"
        return [problem for target in settings.targets for problem in missing_step("targets", target, step_ids, what)]

    async def execute(self, settings: TeardownSandboxesSettings, ctx: StepContext) -> dict[str, Any]:
        me = ctx.step_id or self.name
        torn, errors, absent, saved = [], [], [], {}
        for target in settings.targets:
            try:
                found = ctx.resource(target, object)
            except StepFailed:
                absent.append(target)
                continue
            if isinstance(found, TornDown):
                absent.append(target)
                continue
            if isinstance(found, World):  # keep what the world recorded: the run record would lose it
                key = f"runs/{ctx.run_id}/{target}.trajectory.jsonl"
                try:
                    ctx.objects.put(key, found.trajectory.to_jsonl())
                    saved[target] = key
                except Exception as exc:
                    errors.append(f"{target}: saving its trajectory: {type(exc).__name__}: {exc}")
            for teardown in _take_teardowns(ctx, target):
                try:
                    await asyncio.to_thread(teardown)
                except Exception as exc:  # tearing down never fails the task
                    errors.append(f"{target}: {type(exc).__name__}: {exc}")
            resources = getattr(ctx, "resources", None)
            if isinstance(resources, dict):
                resources[target] = TornDown(target, me)
            torn.append(target)
            ctx.log(f"{me}: tore down what {target} created")
        return {"torn_down": torn, "not_found": absent, "errors": errors, "trajectories": saved}


def _take_teardowns(ctx: StepContext, step_id: str) -> list[Any]:
    """Remove the step's registered teardowns from the run (so they do not run twice), newest first."""
    teardowns = getattr(ctx, "teardowns", None)
    if not isinstance(teardowns, list):
        return []
    mine = [fn for owner, fn in teardowns if owner == step_id]
    teardowns[:] = [(owner, fn) for owner, fn in teardowns if owner != step_id]
    return list(reversed(mine))


# ---- peer_agents ------------------------------------------------------------------------------------
MESSAGE_PEER = "message_peer"
MAX_PEER_DEPTH = 4


class PeerAgentsSettings(StepSettings):
    peers: dict[str, list[str]] = Field(
        min_length=1, description="Agent step → the agent steps it may message (delegate to)."
    )
    mutual: bool = Field(False, description="Also let every listed peer message the agent that lists it.")


class PeerAgents(CoreStep[PeerAgentsSettings]):
    name = "peer_agents"
    description = "Tell agents which other agents they may message; agents get a `message_peer` tool."
    Settings = PeerAgentsSettings

    def check(self, settings: PeerAgentsSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        for agent, peers in settings.peers.items():
            problems += missing_step("peers", agent, step_ids, "deploy_agent")
            for peer in peers:
                problems += missing_step(f"peers.{agent}", peer, step_ids, "deploy_agent")
                if peer == agent:
                    problems.append((f"peers.{agent}", "an agent cannot be its own peer"))
        return problems

    async def execute(self, settings: PeerAgentsSettings, ctx: StepContext) -> dict[str, Any]:
        table: dict[str, list[str]] = {agent: list(peers) for agent, peers in settings.peers.items()}
        if settings.mutual:
            for agent, peers in list(table.items()):
                for peer in peers:
                    table.setdefault(peer, [])
                    if agent not in table[peer]:
                        table[peer].append(agent)
        named = {*table, *(peer for peers in table.values() for peer in peers)}
        agents = {step: deployed_agent(ctx, step, "peers") for step in sorted(named)}
        for step, peers in table.items():
            deployed = agents[step]
            described = {peer: describe_peer(agents[peer]) for peer in peers}
            deployed.agent.peers = described  # visible to the agent kind; PeerToolAccess gives it a tool too
            base = deployed.tools.base if isinstance(deployed.tools, PeerToolAccess) else deployed.tools
            deployed.tools = PeerToolAccess(base, step, {peer: agents[peer] for peer in peers}, deployed.world)
        return {"peers": table}


def describe_peer(deployed: DeployedAgent) -> str:
    card = getattr(deployed.agent, "card", None)
    if isinstance(card, dict) and card.get("description"):
        return str(card["description"])
    return f"{deployed.kind} agent acting as {deployed.role}"


class PeerToolAccess:
    """A role's tools plus `message_peer(peer, text)`, which prompts a peer agent and returns its answer.

    The peer answers in a worker thread with its own event loop (tool calls are synchronous), while the
    caller waits; each message and answer is recorded in the caller's world trajectory as `peer_message`.
    """

    _depth = threading.local()

    def __init__(self, base: Any, me: str, peers: dict[str, DeployedAgent], world: World) -> None:
        self.base, self.me, self.peers, self.world = base, me, peers, world

    def list_tools(self) -> list[dict[str, Any]]:
        tools = list(self.base.list_tools())
        if self.peers:
            names = sorted(self.peers)
            tools.append(
                {
                    "name": MESSAGE_PEER,
                    "description": "Send a message to a peer agent and get its answer. Peers: "
                    + "; ".join(f"{name}: {describe_peer(self.peers[name])}" for name in names),
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "peer": {"type": "string", "enum": names, "description": "Which peer."},
                            "text": {"type": "string", "minLength": 1, "description": "The message."},
                        },
                        "required": ["peer", "text"],
                        "additionalProperties": False,
                    },
                }
            )
        return tools

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name != MESSAGE_PEER or not self.peers:
            return dict(self.base.call_tool(name, arguments))
        peer, text = arguments.get("peer"), arguments.get("text")
        if peer not in self.peers:
            return _refusal("invalid_arguments", f"peer: {peer!r} is not a peer of {self.me} ({sorted(self.peers)})")
        if not isinstance(text, str) or not text.strip():
            return _refusal("invalid_arguments", "text: give the message to send")
        depth = getattr(self._depth, "value", 0)
        if depth >= MAX_PEER_DEPTH:
            return _refusal("peer_loop", f"peer messages nested deeper than {MAX_PEER_DEPTH}")
        target = self.peers[peer]
        answer: dict[str, Any] = {}

        def ask() -> None:
            self._depth.value = depth + 1
            try:
                response = asyncio.run(target.agent.respond(text, target.tools))
                answer["ok"] = {"peer": peer, "reply": str(response.text or ""), "structured": response.structured}
            except Exception as exc:
                answer["error"] = f"{type(exc).__name__}: {exc}"

        worker = threading.Thread(target=ask, name=f"peer-{peer}")
        worker.start()
        worker.join()
        now = self.world.clock.now().isoformat()
        if "error" in answer:
            error = answer["error"]
            self.world.trajectory.record("peer_message", now, sender=self.me, peer=peer, text=text, error=error)
            return _refusal("peer_failed", f"peer {peer} could not answer: {answer['error']}")
        reply = answer["ok"]["reply"]
        self.world.trajectory.record("peer_message", now, sender=self.me, peer=peer, text=text, reply=reply)
        return {"ok": True, "result": answer["ok"]}


def _refusal(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}
