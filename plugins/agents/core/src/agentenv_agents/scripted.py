"""The `scripted` agent kind: a deterministic policy file, so every bundle can run offline and in CI.

A policy lists, for each user turn, the actions to take: tool calls (with `{{ template }}` arguments
over earlier results) and text to say. The whole file is checked when the agent is made, so a typo
fails before a run starts, with the file, the turn/action index and the field in the message.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from agentenv_agents._settings import coerce_settings
from agentenv_agents.templating import TemplateError, as_text, render, template_paths

RESERVED_NAMES = ("prompt", "turn", "seed")
"""Names every template can use besides saved results: the user message, the turn index, the seed."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PolicyError(ValueError):
    """A policy that cannot be loaded or run; the message names the file, the turn/action and the field."""


class Action(BaseModel):
    """One step of a turn: a tool `call` (with `args`, optional `save` and `expect`), a `say`, or a `write`
    of a file (`write` = its name, `text` = its content) that the response carries as an output file."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    call: str | None = None
    args: dict[str, Any] = {}
    save: str | None = None
    expect: Literal["ok"] | None = None
    say: str | None = None
    write: str | None = None
    text: str | None = None

    @field_validator("call")
    @classmethod
    def _tool_named(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("give the name of the tool to call")
        return value

    @field_validator("save")
    @classmethod
    def _save_name(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not _NAME.fullmatch(value):
            raise ValueError(f"{value!r} is not a usable name; use letters, digits and '_' (e.g. 'orders')")
        if value in RESERVED_NAMES:
            raise ValueError(f"{value!r} is reserved for templates ({', '.join(RESERVED_NAMES)}); choose another")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Action:
        if sum(kind is not None for kind in (self.call, self.say, self.write)) != 1:
            raise ValueError(
                "an action has exactly one of `call` (a tool call), `say` (text for the response) "
                "or `write` (an output file, with `text`)"
            )
        if (self.write is None) != (self.text is None):
            raise ValueError("`write` (the file name) and `text` (its content) go together")
        if self.say is not None or self.write is not None:
            extra = [field for field in ("args", "save", "expect") if field in self.model_fields_set]
            if extra:
                raise ValueError(
                    f"a `say` or `write` action takes no {', '.join(extra)} (those belong to `call` actions)"
                )
        return self


class Turn(BaseModel):
    """What the agent does for one user message."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    actions: list[Action] = []


class Policy(BaseModel):
    """A whole policy file: a description and one `[[turn]]` per `respond()` call."""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    turn: list[Turn] = []


_FIELDS_BY_DEPTH = {
    0: list(Policy.model_fields),
    1: list(Turn.model_fields),
    2: list(Action.model_fields),
}


class ScriptedSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy: str | None = None
    """Path of the policy file (.toml or .json); the caller resolves relative paths against the bundle."""
    policy_data: dict[str, Any] | None = None
    """The policy inline, instead of a file."""
    name: str = "scripted"
    seed: int = 0

    @model_validator(mode="after")
    def _one_source(self) -> ScriptedSettings:
        if (self.policy is None) == (self.policy_data is None):
            raise ValueError(
                "give exactly one of `policy` (a .toml or .json file) or `policy_data` (the policy inline)"
            )
        return self


class ScriptedAgent(AgentKind[ScriptedSettings]):
    """Replays a policy: each `respond()` runs the next `[[turn]]`'s actions against the world's tools."""

    name = "scripted"
    description = "Deterministic policy from a TOML/JSON file: templated tool calls and canned replies per turn."
    Settings = ScriptedSettings

    def __init__(self, settings: BaseModel | Mapping[str, Any] | None = None) -> None:
        options = coerce_settings(ScriptedSettings, settings)
        super().__init__(options)
        self.options = options
        if options.policy is not None:
            self.source = str(Path(options.policy).resolve())
            self.policy = policy_from_file(Path(self.source))
        else:
            self.source = "policy_data"
            self.policy = parse_policy(dict(options.policy_data or {}), self.source)
        self.turn_index = 0
        self.saved: dict[str, Any] = {}
        self.conversation: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self._failed_saves: dict[str, str] = {}

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        index = self.turn_index
        self.turn_index += 1
        self.conversation.append({"role": "user", "content": prompt})
        in_policy = index < len(self.policy.turn)
        response = self._run_turn(index, prompt, tools) if in_policy else AgentResponse()  # extra turns: nothing
        self.conversation.append({"role": "assistant", "content": response.text})
        return response

    def _run_turn(self, index: int, prompt: str, tools: ToolAccess) -> AgentResponse:
        said: list[str] = []
        files: dict[str, str] = {}
        for position, action in enumerate(self.policy.turn[index].actions):
            where = f"turn[{index}].actions[{position}]"
            context = {**self.saved, "prompt": prompt, "turn": index, "seed": self.options.seed}
            if action.say is not None:
                said.append(as_text(self._render(action.say, context, where, "say")))
                continue
            if action.write is not None:
                files[action.write] = as_text(self._render(action.text, context, where, "text"))
                continue
            assert action.call is not None
            args = self._render(action.args, context, where, "args")
            outcome = tools.call_tool(action.call, args)
            self.calls.append({"turn": index, "action": position, "tool": action.call, "args": args, **outcome})
            if outcome.get("ok") is True:
                if action.save:
                    self.saved[action.save] = outcome.get("result")
                    self._failed_saves.pop(action.save, None)
                continue
            if action.save:
                self.saved.pop(action.save, None)
                self._failed_saves[action.save] = where
            if action.expect == "ok":
                error = outcome.get("error") or {}
                said.append(
                    f'Stopped: {action.call} failed at {where} (expect = "ok"): '
                    f"{error.get('code', 'error')}: {error.get('message', 'no message')}"
                )
                return AgentResponse(
                    text="\n".join(said),
                    structured={"error": {"action": where, "tool": action.call, "error": error}},
                    files=files,
                )
        return AgentResponse(text="\n".join(said), files=files)

    def _render(self, value: Any, context: dict[str, Any], where: str, field: str) -> Any:
        try:
            return render(value, context, field)
        except TemplateError as exc:
            note = ""
            if self._failed_saves:
                failed = ", ".join(f"{name} ({at})" for name, at in sorted(self._failed_saves.items()))
                note = f"; not saved because their call failed: {failed}"
            raise PolicyError(f"{self.source}: {where}.{exc}{note}") from None


def policy_from_file(path: Path) -> Policy:
    """The checked policy in a file, parsed once per file version (thousands of rollouts share it)."""
    try:
        stat = path.stat()
    except OSError:
        return parse_policy(read_policy_file(path), str(path))  # raises the clear file error
    return _parsed_policy(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _parsed_policy(path: str, mtime_ns: int, size: int) -> Policy:
    return parse_policy(read_policy_file(Path(path)), path)


def read_policy_file(path: Path) -> dict[str, Any]:
    """The raw policy in a .toml or .json file; errors name the file and what to fix."""
    if path.suffix not in (".toml", ".json"):
        raise PolicyError(f"{path}: a policy file must be .toml or .json (settings field `policy`)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(f"{path}: policy file not found (settings field `policy`)") from None
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read the policy file: {exc}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        kind = "TOML" if path.suffix == ".toml" else "JSON"
        raise PolicyError(f"{path}: not valid {kind}: {exc}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: a policy is a table/object with `description` and `turn`")
    return data


def parse_policy(data: dict[str, Any], source: str) -> Policy:
    """Validate a whole policy: structure, template syntax, and that every template names a known value."""
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        problems = [_describe(error) for error in exc.errors(include_url=False)]
        raise PolicyError("\n".join(f"{source}: {problem}" for problem in problems)) from None
    known = set(RESERVED_NAMES)
    problems = []
    for t, turn in enumerate(policy.turn):
        for a, action in enumerate(turn.actions):
            where = f"turn[{t}].actions[{a}]"
            field, value = (
                ("say", action.say)
                if action.say is not None
                else ("text", action.text)
                if action.write is not None
                else ("args", action.args)
            )
            try:
                paths = template_paths(value, field)
            except TemplateError as exc:
                problems.append(f"{where}.{exc}")
                continue
            for location, path in paths:
                root = path.split(".")[0]
                if root not in known:
                    problems.append(
                        f"{where}.{location}: template '{{{{ {path} }}}}' uses {root!r}, which no earlier action "
                        f"saves (available here: {', '.join(sorted(known))})"
                    )
            if action.save:
                known.add(action.save)
    if problems:
        raise PolicyError("\n".join(f"{source}: {problem}" for problem in problems))
    return policy


def _describe(error: Any) -> str:
    """One pydantic error as `turn[0].actions[2].save: message`, with a hint for unknown fields."""
    loc = [part for part in error["loc"] if not str(part).startswith("function-")]
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        depth = sum(1 for part in loc if isinstance(part, int))
        allowed = _FIELDS_BY_DEPTH.get(depth, [])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        message = f"unknown field (allowed: {', '.join(allowed)}){hint}"
    return f"{path or '(policy)'}: {message}"
