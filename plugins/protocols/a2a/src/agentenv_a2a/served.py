"""A served agent and its agent-config extension: configuration, tools, state and trajectory.

`ServedAgent` sits between the A2A executor and an `AgentKind`. It keeps what a client can change
through the `urn:agentenv:agent-config/v1` extension (name, description, system prompt, role, skills,
peers, MCP servers), the tools the agent acts through, a record per task (its prompt, answer and
tool calls), and saves or loads the agent's state as JSON.

How the configuration reaches an agent, honestly, whatever its kind:

- **Tools** (every kind): the agent acts through `ServedTools`, which offers the world's tools (as the
  configured role), the tools of each configured MCP server, and built-in tools: `agent_config` (read
  the configuration: a scripted policy can `save` it and say `{{ config.system_prompt }}`),
  `memory_write` / `memory_read` (a scratch memory that `state/save` carries), and `message_peer`
  (send a message to a configured peer agent over A2A and get its answer).
- **Instructions** (kinds with a `system_prompt` setting, such as `llm`): the system prompt, the role,
  the skills' texts and the peers are composed into the agent's system prompt before each prompt.

Prompts run one at a time, in a worker thread with its own event loop, so a tool call that blocks
(a peer's answer, an MCP call) never stalls the server's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Callable
from typing import Any

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import ValidationError

from agentenv_a2a.config import (
    EXTENSION_URI,
    METHODS,
    REST_FIELDS,
    AgentConfig,
    ConfigUpdate,
    InstallDeclaration,
    McpServerConfig,
    card_methods,
)

STATE_FORMAT = "agentenv-agent-state/v1"
MAX_RECORDS = 1000
"""Task records kept for `trajectory/get` (oldest dropped first)."""
_NOT_STATE = frozenset({"settings", "options", "policy", "source"})
"""Instance attributes that are the agent's make-up, not its state (never saved or loaded)."""
_SECRET_HINTS = ("key", "token", "secret", "password")


class ConfigRefused(ValueError):
    """A config/state request the served agent cannot honour; the message names the field and the fix."""


def _obj(description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


BUILTIN_TOOLS: dict[str, dict[str, Any]] = {
    "agent_config": {
        "description": "Read your own configuration: name, description, system prompt, role, skills, peers.",
        "inputSchema": _obj("No arguments.", {}, []),
    },
    "memory_write": {
        "description": "Remember a value under a key (kept across prompts and in saved state).",
        "inputSchema": _obj(
            "What to remember.",
            {
                "key": {"type": "string", "description": "Name to remember it by."},
                "value": {"type": "string", "description": "The value."},
            },
            ["key", "value"],
        ),
    },
    "memory_read": {
        "description": "Read a value remembered with memory_write.",
        "inputSchema": _obj(
            "Which value.", {"key": {"type": "string", "description": "The name it was remembered by."}}, ["key"]
        ),
    },
    "message_peer": {
        "description": "Send a message to one of your peer agents (over A2A) and get its answer.",
        "inputSchema": _obj(
            "The message and the peer.",
            {
                "text": {"type": "string", "description": "What to tell or ask the peer."},
                "peer": {"type": "string", "description": "The peer's name (default: your first peer)."},
            },
            ["text"],
        ),
    },
}


def _ok(result: Any) -> dict[str, Any]:
    return {"ok": True, "result": result}


def _refused(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class ServedTools:
    """The `ToolAccess` a served agent acts through: world tools, MCP servers' tools, built-in tools."""

    def __init__(self, served: ServedAgent) -> None:
        self.served = served

    def list_tools(self) -> list[dict[str, Any]]:
        tools = list(self.served.world_tools().list_tools())
        names = {spec["name"] for spec in tools}
        for public, (_server, spec) in self.served.mcp_tools().items():
            if public not in names:
                tools.append({**spec, "name": public})
                names.add(public)
        for name, spec in BUILTIN_TOOLS.items():
            if name == "message_peer" and not self.served.config.peers:
                continue
            if name not in names:
                tools.append({"name": name, **spec})
        return tools

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        served = self.served
        source = "world"
        world_names = {spec["name"] for spec in served.world_tools().list_tools()}
        if name in world_names:
            outcome = served.world_tools().call_tool(name, arguments)
        elif name in served.mcp_tools(refresh_for=name):
            server, _spec = served.mcp_tools()[name]
            source = f"mcp:{server}"
            outcome = served.mcp_access(server).call_tool(served.mcp_names[name], arguments)
        elif name in BUILTIN_TOOLS:
            source = "agent"
            outcome = served.builtin(name, arguments)
        else:
            outcome = _refused("unknown_tool", f"no tool {name!r}; call one of the listed tools")
        served.record_call({"tool": name, "arguments": arguments, "source": source, **outcome})
        return outcome


class ServedAgent:
    """One agent served over A2A with the agent-config extension (see the module docstring)."""

    def __init__(
        self,
        agent: AgentKind[Any],
        tools: ToolAccess,
        *,
        name: str,
        description: str,
        make_agent: Callable[[], AgentKind[Any]] | None = None,
        install: InstallDeclaration | dict[str, Any] | None = None,
    ) -> None:
        self.agent = agent
        self.base_tools = tools
        self.make_agent = make_agent or (lambda: type(agent)(agent.settings))
        self.config = AgentConfig(
            name=name,
            description=description,
            system_prompt=str(getattr(agent.settings, "system_prompt", "") or ""),
            role=str(getattr(tools, "role", "default")),
        )
        self._role_tools: ToolAccess = tools
        self.install = (
            InstallDeclaration.model_validate(install) if install is not None else default_install(agent, name)
        )
        self.memory: dict[str, str] = {}
        self.records: list[dict[str, Any]] = []
        self.max_records = MAX_RECORDS
        """Task records kept (the app sets it to its `max_tasks`)."""
        self.current: dict[str, Any] | None = None
        self.lock = threading.RLock()
        self.tools = ServedTools(self)
        self.mcp_names: dict[str, str] = {}
        self._mcp: dict[str, Any] = {}
        self._mcp_tools: dict[str, tuple[str, dict[str, Any]]] | None = None
        self._peers: dict[str, Any] = {}

    # ---- tools -------------------------------------------------------------------------------------
    @property
    def world(self) -> Any:
        return getattr(self.base_tools, "world", None)

    def roles(self) -> list[str] | None:
        """The roles the agent's world defines, or None when it acts in no in-process world."""
        world = self.world
        rbac = getattr(world, "rbac", None)
        return sorted(rbac.roles) if rbac is not None else None

    def world_tools(self) -> ToolAccess:
        return self._role_tools

    def mcp_access(self, server: str) -> Any:
        return self._mcp[server]

    def mcp_tools(self, refresh_for: str | None = None) -> dict[str, tuple[str, dict[str, Any]]]:
        """public name → (server, tool spec) over every configured MCP server (cached; refreshed on a miss)."""
        if self._mcp_tools is None or (refresh_for is not None and refresh_for not in self._mcp_tools):
            found: dict[str, tuple[str, dict[str, Any]]] = {}
            names: dict[str, str] = {}
            for server, access in self._mcp.items():
                try:
                    specs = access.list_tools()
                except Exception:  # a server gone mid-run offers nothing; its calls report the error
                    specs = []
                for spec in specs:
                    public = spec["name"] if spec["name"] not in found else f"{server}_{spec['name']}"
                    found[public] = (server, spec)
                    names[public] = spec["name"]
            self._mcp_tools, self.mcp_names = found, names
        return self._mcp_tools

    def builtin(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == "agent_config":
            return _ok(self.config.public())
        if name == "memory_write":
            key, value = arguments.get("key"), arguments.get("value")
            if not isinstance(key, str) or not isinstance(value, str):
                return _refused("invalid_arguments", "memory_write takes `key` and `value`, both strings")
            self.memory[key] = value
            return _ok({"key": key, "value": value})
        if name == "memory_read":
            key = arguments.get("key")
            if key not in self.memory:
                known = ", ".join(sorted(self.memory)) or "nothing remembered yet"
                return _refused("not_found", f"nothing remembered under {key!r} (keys: {known})")
            return _ok({"key": key, "value": self.memory[key]})
        return self._message_peer(arguments)

    def _message_peer(self, arguments: dict[str, Any]) -> dict[str, Any]:
        text, wanted = arguments.get("text"), arguments.get("peer")
        peers = {peer.name: peer for peer in self.config.peers}
        if not peers:
            return _refused("no_peers", "this agent has no peers; configure some with config/set `peers`")
        if not isinstance(text, str) or not text:
            return _refused("invalid_arguments", "message_peer needs `text`: the message for the peer")
        name = wanted if isinstance(wanted, str) and wanted else self.config.peers[0].name
        if name not in peers:
            return _refused("unknown_peer", f"no peer {name!r} (peers: {', '.join(peers)})")
        from agentenv_a2a.agent import A2aAgent, A2aError, A2aSettings

        client = self._peers.get(name)
        if client is None or client.url != peers[name].url.rstrip("/"):
            client = self._peers[name] = A2aAgent(A2aSettings(url=peers[name].url))
        try:
            response = _run_elsewhere(client.respond(text, self.tools))
        except A2aError as exc:
            return _refused("peer_failed", str(exc))
        return _ok({"peer": name, "text": response.text, "structured": response.structured})

    # ---- prompts -----------------------------------------------------------------------------------
    def respond(self, prompt: str, *, task_id: str = "", context_id: str = "") -> AgentResponse:
        """Run one prompt to completion (blocking; call it from a worker thread), recording the task."""
        record: dict[str, Any] = {
            "task_id": task_id,
            "context_id": context_id,
            "role": self.config.role,
            "prompt": prompt,
            "response": None,
            "state": "working",
            "tool_calls": [],
        }
        with self.lock:
            self.records.append(record)
            del self.records[: -self.max_records]
            self.current = record
            try:
                self._instruct()
                response = asyncio.run(self.agent.respond(prompt, self.tools))
            except BaseException as exc:
                record["state"] = "failed"
                record["error"] = f"{type(exc).__name__}: {exc}"
                raise
            finally:
                self.current = None
            record["state"] = "completed"
            record["response"] = {"text": response.text, "structured": response.structured}
            return response

    def record_call(self, call: dict[str, Any]) -> None:
        if self.current is not None:
            self.current["tool_calls"].append(json.loads(json.dumps(call, default=str)))

    def instructions(self) -> str:
        """The system prompt an instruction-following agent gets: prompt, role, skills, peers."""
        config = self.config
        parts = [config.system_prompt] if config.system_prompt else []
        if config.role != "default":
            parts.append(f"You act as the role {config.role!r}.")
        if config.skills:
            lines = ["Skills you have (follow a skill's instructions when you use it):"]
            for skill in config.skills:
                lines.append(f"- {skill.name}: {skill.description}".rstrip(": "))
                if skill.text:
                    lines.append(f"  {skill.text}")
            parts.append("\n".join(lines))
        if config.peers:
            listed = "; ".join(f"{p.name}" + (f" ({p.description})" if p.description else "") for p in config.peers)
            parts.append(f"Peer agents you can message with the message_peer tool: {listed}.")
        return "\n\n".join(parts)

    def _instruct(self) -> None:
        """Give kinds that take a system prompt the composed instructions (conversation included)."""
        settings = getattr(self.agent, "options", None) or self.agent.settings
        if "system_prompt" not in type(settings).model_fields:
            return
        text = self.instructions()
        settings.system_prompt = text
        messages = getattr(self.agent, "messages", None)
        if isinstance(messages, list) and messages:
            first = messages[0]
            if isinstance(first, dict) and first.get("role") == "system":
                if text:
                    first["content"] = text
                else:
                    messages.pop(0)
            elif text:
                messages.insert(0, {"role": "system", "content": text})

    # ---- the extension's methods -------------------------------------------------------------------
    def handle(self, method: str, params: dict[str, Any]) -> Any:
        """One extension call; `ConfigRefused` (→ JSON-RPC -32602) for requests it cannot honour."""
        handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "config/get": lambda _p: self.config_get(),
            "config/set": self.config_set,
            "state/save": lambda _p: {"state": self.state_save()},
            "state/load": lambda p: self.state_load(p.get("state")),
            "state/reset": lambda _p: self.state_reset(),
            "trajectory/get": self.trajectory,
        }
        if method not in handlers:
            raise LookupError(method)
        with self.lock:
            return handlers[method](params)

    def config_get(self) -> dict[str, Any]:
        return {**self.config.public(), "roles": self.roles(), "kind": self.agent.name}

    def config_set(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            update = ConfigUpdate.model_validate(params)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(params)'}: {e['msg']}" for e in exc.errors(include_url=False)
            )
            raise ConfigRefused(f"config/set: {problems}") from None
        given = update.model_dump(exclude_unset=True)
        for field in ("skills", "peers", "mcp_servers"):
            items = getattr(update, field) or []
            names = [item.name for item in items]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise ConfigRefused(f"config/set: {field}: the name {duplicates[0]!r} is given twice; names are unique")
        if update.role is not None:
            self._switch_role(update.role)
        if update.mcp_servers is not None:
            self._connect_mcp(update.mcp_servers)
        if update.peers is not None:
            self._peers.clear()
        self.config = self.config.model_copy(update={k: getattr(update, k) for k in given})
        return self.config_get()

    def _switch_role(self, role: str) -> None:
        world = self.world
        if world is None or not hasattr(world, "tool_access"):
            return  # no in-process world: the role is recorded and reported, tools stay as they are
        roles = self.roles() or []
        if role not in roles:
            name = getattr(world, "name", "?")
            raise ConfigRefused(f"config/set: role: world {name!r} has no role {role!r} (roles: {', '.join(roles)})")
        self._role_tools = world.tool_access(role)

    def _connect_mcp(self, servers: list[McpServerConfig]) -> None:
        connected: dict[str, Any] = {}
        if servers:
            connected = self._open_mcp(servers)
        self.close_mcp()
        self._mcp = connected
        self._mcp_tools = None

    @staticmethod
    def _open_mcp(servers: list[McpServerConfig]) -> dict[str, Any]:
        """A checked MCP connection per server, all or none (the ones opened are closed on failure)."""
        try:
            from agentenv_gateway.api import McpToolAccess
        except ImportError:
            raise ConfigRefused(
                "config/set: mcp_servers: MCP access needs agentenv-gateway; install agentenv-a2a[mcp]"
            ) from None
        connected: dict[str, Any] = {}
        try:
            for server in servers:
                base = server.url.rstrip("/").removesuffix("/mcp")
                access = McpToolAccess(base, server.token)
                connected[server.name] = access
                try:
                    access.list_tools()
                except Exception as exc:
                    raise ConfigRefused(
                        f"config/set: mcp_servers: cannot reach MCP server {server.name!r} at {base}/mcp: {exc}"
                    ) from None
        except BaseException:
            for access in connected.values():
                access.close()
            raise
        return connected

    def close_mcp(self) -> None:
        for access in self._mcp.values():
            access.close()
        self._mcp = {}
        self._mcp_tools = None

    def state_save(self) -> dict[str, Any]:
        """The agent's state as JSON: its conversation and saved values (every JSON-able attribute), memory."""
        agent_state = {
            key: json.loads(json.dumps(value))
            for key, value in vars(self.agent).items()
            if key not in _NOT_STATE and _jsonable(value)
        }
        return {"format": STATE_FORMAT, "kind": self.agent.name, "agent": agent_state, "memory": dict(self.memory)}

    def state_load(self, state: Any) -> dict[str, Any]:
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ConfigRefused(f"state/load: state: give the object state/save returned (format {STATE_FORMAT!r})")
        if state.get("kind") != self.agent.name:
            raise ConfigRefused(
                f"state/load: state: it was saved by a {state.get('kind')!r} agent; this one is {self.agent.name!r}"
            )
        fresh = self.make_agent()
        for key, value in dict(state.get("agent") or {}).items():
            if key in _NOT_STATE or not hasattr(fresh, key):
                raise ConfigRefused(f"state/load: state.agent.{key}: not part of a {self.agent.name!r} agent's state")
            setattr(fresh, key, value)
        self.agent = fresh
        self.memory = {str(k): str(v) for k, v in dict(state.get("memory") or {}).items()}
        return {"loaded": True, "kind": self.agent.name}

    def state_reset(self) -> dict[str, Any]:
        self.agent = self.make_agent()
        self.memory = {}
        return {"reset": True}

    def trajectory(self, params: dict[str, Any]) -> dict[str, Any]:
        task_id, context_id = params.get("task_id"), params.get("context_id")
        tasks = [
            record
            for record in self.records
            if (task_id is None or record["task_id"] == task_id)
            and (context_id is None or record["context_id"] == context_id)
        ]
        if task_id is not None and not tasks:
            raise ConfigRefused(f"trajectory/get: task_id: no task {task_id!r} was run by this agent")
        return {"tasks": json.loads(json.dumps(tasks, default=str))}

    def extension_params(self, endpoint: str) -> dict[str, Any]:
        """The card's params of the extension (see `agentenv_a2a.config`): `methods` is the reference's object of
        REST operations (its clients read `methods.set.request.supported`), `rpc` our JSON-RPC methods."""
        return {
            "endpoint": endpoint,
            "methods": card_methods(),
            "rpc": list(METHODS),
            "install": self.install.model_dump(mode="json"),
        }

    def rest_set(self, fields: Any) -> dict[str, Any]:
        """The reference's REST `set`: a JSON object of `REST_FIELDS`; ConfigRefused names anything else."""
        if not isinstance(fields, dict):
            raise ConfigRefused("set: send a JSON object of configuration fields")
        unknown = sorted(set(fields) - set(REST_FIELDS))
        if unknown:
            raise ConfigRefused(
                f"set: unsupported field(s) {', '.join(map(repr, unknown))}; supported: {', '.join(REST_FIELDS)} "
                "(skills, peers and mcp_servers: JSON-RPC config/set)"
            )
        with self.lock:
            self.config_set(fields)
        return {"status": "updated"}

    def rest_get(self) -> dict[str, Any]:
        with self.lock:
            return {"config": self.config_get()}

    def close(self) -> None:
        self.close_mcp()


def _run_elsewhere(coroutine: Any) -> Any:
    """Run a coroutine to completion on a fresh event loop in another thread (callable from any thread)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentenv-a2a-peer") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def default_install(agent: AgentKind[Any], name: str) -> InstallDeclaration:
    """A declaration that recreates the agent's spec (kind and settings, secrets left out) and checks it."""
    settings = agent.settings.model_dump(mode="json") if hasattr(agent.settings, "model_dump") else {}
    settings = {k: v for k, v in settings.items() if not any(hint in k.lower() for hint in _SECRET_HINTS)}
    spec = {"kind": agent.name, "name": name, "settings": settings}
    check = (
        "import json; spec = json.load(open('agentenv-agent.json')); "
        "assert spec.get('kind') and isinstance(spec.get('settings'), dict), 'agentenv-agent.json: no kind/settings'"
    )
    return InstallDeclaration(
        files={"agentenv-agent.json": json.dumps(spec, indent=2, sort_keys=True, default=str) + "\n"},
        commands=[["python3", "-c", check]],
        requires=["agentenv-a2a"],
    )


__all__ = ["EXTENSION_URI", "ConfigRefused", "ServedAgent", "ServedTools", "default_install"]
