"""The `@tool` decorator: a typed method becomes a tool with a JSON Schema and validated arguments.

The schema comes from the method's type hints (through pydantic) and its docstring: the first
paragraph describes the tool and an ``Args:`` section describes each parameter. A parameter named `context`
is not an argument: the world passes the call's `ToolContext` there (who calls, the virtual time, the episode).
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections import abc
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any, TypeVar, overload
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

F = TypeVar("F", bound=Callable[..., Any])
TOOL_MARK = "__agentenv_tool__"


class ToolError(Exception):
    """Raised by a tool to refuse a call under the app's rules; the env's state is rolled back."""

    def __init__(self, message: str, *, code: str = "rule_violation", field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.field = field

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.field:
            error["field"] = self.field
        return error


CONTEXT = "context"
"""The parameter name that asks for the call's `ToolContext` instead of an argument."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know of its call besides its arguments, so one tool can serve every caller (a game's
    `drop` knows whose move it is from the role, where it would otherwise need one tool per player and RBAC).

    Declare a parameter `context: ToolContext` on the tool method to receive it; it is never in the schema.
    """

    role: str | None
    """The caller's role in the world (None when the env is called outside a world)."""
    now: datetime
    """The virtual time of the call."""
    episode: str | None = None
    """The world's `episode` (a run's or an RL episode's id, when whoever runs the world set it)."""
    trigger: str | None = None
    """The id of the trigger whose action made this call; None for a call of the agent's own."""


CALL_CONTEXT: ContextVar[ToolContext | None] = ContextVar("agentenv_tool_context", default=None)
"""The context of the tool call in progress, set by the world around `Env.call` (a context variable, so calls
in other threads or tasks each see their own, and `Env.call` keeps its signature for envs that override it)."""


def tool_parameters(func: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters that are the tool's arguments: all but `self` and `context`."""
    return [p for p in list(inspect.signature(func).parameters.values())[1:] if p.name != CONTEXT]


def wants_context(func: Callable[..., Any]) -> bool:
    return CONTEXT in inspect.signature(func).parameters


class ToolSchemaError(TypeError):
    """A tool whose arguments have no JSON Schema (a parameter type pydantic cannot describe); the message names
    the env, the tool, the parameter and its type. `agentenv plugin check` reports it ahead of any run."""


class ToolSpec:
    """A tool as the world and the card see it.

    For a method tool (`func` given) the description and the argument model are made on first use: a world
    knows every tool of its envs, and a run calls or describes only a few of them.
    """

    def __init__(
        self,
        name: str,
        description: str | None = None,
        method: str = "",
        args_model: type[BaseModel] | None = None,
        read_only: bool = False,
        *,
        func: Callable[..., Any] | None = None,
        owner: str = "",
    ) -> None:
        self.name, self.method, self.read_only, self.func, self.owner = name, method, read_only, func, owner
        self.wants_context = func is not None and wants_context(func)
        self._description, self._args_model = description, args_model
        self._param_docs: dict[str, str] = {}

    @property
    def description(self) -> str:
        if self._description is None:
            self._description, self._param_docs = parse_docstring(self.func.__doc__ if self.func else None)
        return self._description

    @property
    def args_model(self) -> type[BaseModel]:
        if self._args_model is None:
            assert self.func is not None, f"tool {self.name!r} has neither an argument model nor a method"
            _ = self.description  # parses the docstring's Args: section too
            try:
                self._args_model = build_args_model(self.func, self.name, self._param_docs)
            except Exception as exc:
                raise ToolSchemaError(self.schema_problem() or f"{self.where}: {exc}") from exc
        return self._args_model

    @property
    def input_schema(self) -> dict[str, Any]:
        model = self.args_model
        try:
            return tool_input_schema(model)
        except Exception as exc:
            raise ToolSchemaError(self.schema_problem() or f"{self.where}: {exc}") from exc

    @property
    def where(self) -> str:
        return f"env {self.owner!r}, tool {self.name!r}" if self.owner else f"tool {self.name!r}"

    def schema_problem(self) -> str | None:
        """Which parameters have a type without a JSON Schema (every one), and what to use instead; None when all
        have one."""
        if self.func is None:
            return None
        bad = []
        for param in tool_parameters(self.func):
            try:
                annotation = _resolved(self.func, param.annotation)
            except Exception as exc:
                return f"{self.where}: its type hints cannot be resolved ({type(exc).__name__}: {exc})"
            if plainly_described(annotation):
                continue  # the usual types need no pydantic round
            try:
                TypeAdapter(annotation).json_schema()
            except Exception:
                bad.append(f"parameter {param.name!r} has type {_shown(annotation)}, which has no JSON Schema")
        if not bad:
            return None
        use = "int, float, bool, a Literal, a list or dict of those, a datetime, or a pydantic model"
        return f"{self.where}: {'; '.join(bad)}; use str, {use}"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema}


_PLAIN = (str, int, float, bool, type(None), Any, datetime, date, time, timedelta, UUID, Decimal)
_SHAPES = (list, dict, tuple, set, frozenset, typing.Union, types.UnionType, abc.Sequence, abc.Mapping)


def plainly_described(hint: Any) -> bool:
    """Whether a type hint certainly has a JSON Schema without asking pydantic: scalars, datetimes, Literal,
    Enums, pydantic models, and lists, dicts, tuples or unions of those (constraints in `Annotated` change
    nothing). Anything else (TypedDicts, a class of the author's) is for pydantic to say."""
    origin = typing.get_origin(hint)
    if origin is None and isinstance(hint, type) and issubclass(hint, BaseModel):
        return not hint.model_config.get("arbitrary_types_allowed")  # pydantic checked its fields when it was made
    if origin is None:
        return hint in _PLAIN or (isinstance(hint, type) and issubclass(hint, Enum))
    if origin is typing.Annotated:
        return plainly_described(typing.get_args(hint)[0])
    if origin is typing.Literal:
        return True
    return origin in _SHAPES and all(arg is Ellipsis or plainly_described(arg) for arg in typing.get_args(hint))


_RESOLVED: dict[tuple[str, str], Any] = {}


def _resolved(func: Callable[..., Any], annotation: Any) -> Any:
    """A parameter's annotation as a type: text (`from __future__ import annotations`) is evaluated in the
    method's module, once per module and text (an env's tools share a few aliases: evaluating each tool's hints
    afresh cost milliseconds per env, on every run's preflight)."""
    if annotation is inspect.Parameter.empty:
        return Any
    if not isinstance(annotation, str):
        return annotation
    key = (func.__module__, annotation)
    if key not in _RESOLVED:
        module = sys.modules[func.__module__]
        _RESOLVED[key] = typing.get_type_hints(_Holder(annotation), vars(module), include_extras=True)["value"]
    return _RESOLVED[key]


class _Holder:
    """An object whose only annotation is `text`, for `typing.get_type_hints` to evaluate."""

    def __init__(self, text: str) -> None:
        self.__annotations__ = {"value": text}


def _shown(hint: Any) -> str:
    """A type as its author wrote it: `Gadget`, `list[Gadget] | None`."""
    if isinstance(hint, type) and typing.get_origin(hint) is None:
        return hint.__qualname__
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])", "", repr(hint))  # no module paths


_SCHEMA_CACHE: dict[type[BaseModel], dict[str, Any]] = {}


def tool_input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments, without pydantic's title noise, cached per model."""
    if model not in _SCHEMA_CACHE:
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        _SCHEMA_CACHE[model] = schema
    return _SCHEMA_CACHE[model]


@overload
def tool(fn: F, *, name: str | None = None, read_only: bool = False) -> F: ...


@overload
def tool(fn: None = None, *, name: str | None = None, read_only: bool = False) -> Callable[[F], F]: ...


def tool(fn: F | None = None, *, name: str | None = None, read_only: bool = False) -> F | Callable[[F], F]:
    """Mark an `Env` method as a tool. `read_only=True` says it changes nothing (no savepoint needed)."""

    def mark(func: F) -> F:
        setattr(func, TOOL_MARK, {"name": name or func.__name__, "read_only": read_only})
        return func

    return mark(fn) if fn is not None else mark


_ARGS_HEADER = re.compile(r"^(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^(\s+)(\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(summary, {param: description}) from a Google-style docstring."""
    if not doc:
        return "", {}
    summary: list[str] = []
    params: dict[str, str] = {}
    section, current, param_indent = "summary", "", 0
    for line in inspect.cleandoc(doc).splitlines():
        if _ARGS_HEADER.match(line):
            section = "args"
        elif line and not line[0].isspace() and section != "summary":
            section = "other"  # Returns:, Raises:, …
        elif section == "summary":
            summary.append(line)
        elif section == "args" and line.strip():
            match = _ARG_LINE.match(line)
            indent = len(line) - len(line.lstrip())
            if match and (not params or indent <= param_indent):
                current, param_indent = match.group(2), indent
                params[current] = match.group(3).strip()
            elif current:
                params[current] = f"{params[current]} {line.strip()}".strip()
    first_paragraph = "\n".join(summary).strip().split("\n\n")[0]
    return " ".join(first_paragraph.split()), params


def build_tool_spec(owner: type, method_name: str, func: Callable[..., Any]) -> ToolSpec:
    """The spec of one marked method; its signature is checked now, its argument model built when needed."""
    mark = getattr(func, TOOL_MARK)
    for param in tool_parameters(func):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {owner.__name__}.{method_name} cannot take *args or **kwargs")
    owner_name = getattr(owner, "name", "") or owner.__name__
    return ToolSpec(mark["name"], method=method_name, read_only=mark["read_only"], func=func, owner=owner_name)


def build_args_model(func: Callable[..., Any], name: str, param_docs: dict[str, str]) -> type[BaseModel]:
    """The pydantic model of a tool's arguments, from the method's signature, type hints and docstring."""
    hints = typing.get_type_hints(func, include_extras=True)
    fields: dict[str, Any] = {}
    for param in tool_parameters(func):
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=param_docs.get(param.name)))
    model_name = "".join(part.title() for part in name.split("_")) + "Args"
    return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)


def argument_errors(exc: ValidationError) -> dict[str, Any]:
    """A structured error naming every bad field, for the caller to fix its call."""
    problems = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(part) for part in err["loc"]) or "(arguments)"
        problems.append({"field": field, "message": err["msg"]})
    summary = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
    return {"code": "invalid_arguments", "message": f"invalid arguments: {summary}", "errors": problems}
