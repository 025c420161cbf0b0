"""The script a stand-in model follows: a list of turns, each a text reply or tool calls.

A script is a TOML or JSON file (or the same data in Python). Every model request the stand-in answers
takes the next turn. A tool call names its tool by *suffix*: harnesses rename the tools they were given
(Claude Code offers `mcp__world__get_ticket`, Codex a namespace `mcp__world` holding `get_ticket`), so the
script says `get_ticket` and the server matches it against the tools the client actually sent.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ScriptError(ValueError):
    """A script that cannot be loaded; the message names the file, the turn and the field."""


class ToolCall(BaseModel):
    """One call the model asks for: the tool by name suffix, and its arguments."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    """A suffix of the offered tool's name: `get_ticket` matches `get_ticket`, `mcp__world__get_ticket`, …"""
    arguments: dict[str, Any] = Field(default_factory=dict)
    offered: bool = True
    """False: send the call as named even when the client offered no such tool (to test refusals)."""
    namespace: str | None = None
    """With `offered = false`: the namespace to call it in (Codex's `mcp__world`), as a model addressing a
    namespaced tool would."""


class Turn(BaseModel):
    """One model reply: text, tool calls, or both (text first)."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    delay: float = Field(default=0.0, ge=0)
    """Seconds to wait before answering (timeouts and latency measurements)."""

    @model_validator(mode="after")
    def _says_something(self) -> Turn:
        if self.text is None and not self.tool_calls:
            raise ValueError("a turn needs `text`, `tool_calls` or both")
        return self


class Script(BaseModel):
    """The turns, served in order; `source` names where they came from in error messages."""

    model_config = ConfigDict(extra="forbid")

    turns: list[Turn] = Field(min_length=1)
    source: str = "<inline>"


def load_script(source: Script | Path | str | Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Script:
    """A `Script` from a file path (`.toml` or `.json`), a mapping `{"turns": [...]}` or a list of turns."""
    if isinstance(source, Script):
        return source
    if isinstance(source, Path | str):
        path = Path(source)
        return _validate(_read(path), str(path))
    if isinstance(source, Mapping):
        return _validate(dict(source), "<inline>")
    return _validate({"turns": list(source)}, "<inline>")


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(
            f"{path}: cannot read the script ({exc.strerror}); give an existing .toml or .json file"
        ) from exc
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        elif path.suffix == ".toml":
            data = tomllib.loads(text)
        else:
            raise ScriptError(f"{path}: unknown script format {path.suffix!r}; name it .toml or .json")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScriptError(f"{path}: not valid {path.suffix[1:].upper()} ({exc})") from exc
    if isinstance(data, list):
        data = {"turns": data}
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: the script must be a table with `turns` (a list of turns)")
    return data


def _validate(data: dict[str, Any], source: str) -> Script:
    data.pop("source", None)
    try:
        return Script.model_validate({**data, "source": source})
    except ValidationError as exc:
        problems = "; ".join(
            f"{_where(error['loc'])}: {error['msg'].removeprefix('Value error, ')}" for error in exc.errors()
        )
        raise ScriptError(f"{source}: {problems}") from exc


def _where(loc: tuple[int | str, ...]) -> str:
    """`turn 2: tool_calls[0].tool` reads better than pydantic's tuple; turns count from 1 as people do."""
    prefix = ""
    if len(loc) > 1 and loc[0] == "turns" and isinstance(loc[1], int):
        prefix, loc = f"turn {loc[1] + 1}", loc[2:]
    rest = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")
    return ", ".join(part for part in (prefix, rest) if part) or "script"
