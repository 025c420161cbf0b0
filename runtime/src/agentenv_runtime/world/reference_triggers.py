"""Triggers written in the reference AgentEnv gateway's language, as our trigger definitions.

Theirs: `{id, when: {type: action|time|state|website, …}, actions: [{type: tool|permission|nl, …}]}`.
Ours: `{id, kind, when, actions: [{call_tool}|{set_tool_access}|{reply}], repeat}`. The common subset
translates exactly: an `action` trigger on one tool (at most one watched role, `where` predicates
`equals`/`regex` on `args.*`/`result.*`, `repeat`), a `time` trigger (`at`, `every` as an ISO 8601
duration, `count`), `tool` actions with literal args (`as` → the acting role) and `permission` actions on
named tools. Everything else (`state` check pipelines, websites, `nl` actions for an executor agent,
templated `${…}` args, delays, barriers, `verify`, `exists`, `after`/`unless`/`until`, stochastic `every`)
is reported, one reason per field, and nothing is guessed.
"""

from __future__ import annotations

import json
import re
from typing import Any

DURATION = re.compile(r"^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
PREDICATES = {"equals", "regex"}


def is_reference_trigger(definition: Any) -> bool:
    """Theirs name the kind in `when.type`; ours in `kind`."""
    when = definition.get("when") if isinstance(definition, dict) else None
    return isinstance(definition, dict) and "kind" not in definition and isinstance(when, dict) and "type" in when


def seconds(duration: str) -> float | None:
    """`PT1H30M` → 5400.0; None when it is not a plain ISO 8601 duration of days, hours, minutes, seconds."""
    match = DURATION.match(duration) if isinstance(duration, str) and duration not in ("P", "PT") else None
    if match is None:
        return None
    days, hours, minutes, secs = (float(part) if part else 0.0 for part in match.groups())
    return days * 86400 + hours * 3600 + minutes * 60 + secs


def translate(definition: dict[str, Any], where: str = "trigger") -> tuple[dict[str, Any] | None, list[str]]:
    """(our definition, []) or (None, one `where.field: reason` per field that has no counterpart)."""
    problems: list[str] = []
    when = dict(definition.get("when") or {})
    kind = when.pop("type", None)
    ours: dict[str, Any] = {"id": definition.get("id"), "kind": kind}
    if kind == "action":
        ours["kind"] = "tool_call"
        ours["when"], ours["repeat"] = _action_when(when, f"{where}.when", problems), bool(when.pop("repeat", False))
    elif kind == "time":
        ours["when"] = _time_when(when, f"{where}.when", problems)
    else:
        why = "triggers have no counterpart (state checks are SQL or Python here)"
        problems.append(f"{where}.when.type: {kind!r} {why}")
    for key in sorted(when):
        problems.append(f"{where}.when.{key}: no counterpart in agentenv's {kind} trigger")
    actions = definition.get("actions") or []
    ours["actions"] = [_action(action, f"{where}.actions.{i}", problems) for i, action in enumerate(actions)]
    for key in sorted(set(definition) - {"id", "when", "actions"}):
        problems.append(f"{where}.{key}: no counterpart in agentenv's triggers")
    return (None, problems) if problems else (ours, [])


def _action_when(when: dict[str, Any], at: str, problems: list[str]) -> dict[str, Any]:
    ours: dict[str, Any] = {"tool": when.pop("tool", None)}
    roles = when.pop("roles", None)
    if roles:
        if len(roles) == 1:
            ours["role"] = roles[0]
        else:
            problems.append(f"{at}.roles: agentenv's tool_call trigger watches one role (or every role)")
    for field, predicate in (when.pop("where", None) or {}).items():
        root, _, path = str(field).partition(".")
        if root not in ("args", "result") or not path or "[*]" in path:
            problems.append(f"{at}.where.{field}: only args.* and result.* paths (no [*]) have a counterpart")
        elif not isinstance(predicate, dict) or not predicate or not set(predicate) <= PREDICATES:
            problems.append(f"{at}.where.{field}: only equals and regex predicates have a counterpart")
        else:
            dotted = re.sub(r"\[(\d+)\]", r".\1", path)  # theirs `items[0].sku`, ours `items.0.sku`
            ours.setdefault(root, {})[dotted] = _predicate(predicate)
    return ours


def _predicate(predicate: dict[str, Any]) -> dict[str, Any]:
    """Their regex is case-sensitive, ours ignores case unless told: the scoped flag keeps theirs exact."""
    if "regex" in predicate:
        return {"regex": f"(?-i:{predicate['regex']})"}
    return dict(predicate)


def _time_when(when: dict[str, Any], at: str, problems: list[str]) -> dict[str, Any]:
    ours: dict[str, Any] = {}
    if "at" in when:
        ours["at"] = when.pop("at")
    else:
        problems.append(f"{at}.at: agentenv's time trigger needs `at` (relative `after` has no counterpart)")
    if "every" in when:
        every = seconds(when.pop("every"))
        if every is None or every <= 0:
            problems.append(f"{at}.every: only a fixed ISO 8601 duration (PT…) has a counterpart")
        else:
            ours["every"] = every
    if "count" in when:
        ours["times"] = when.pop("count")
    return ours


def _action(action: dict[str, Any], at: str, problems: list[str]) -> dict[str, Any]:
    action = dict(action)
    kind = action.pop("type", None)
    ours: dict[str, Any] = {}
    if kind == "tool":
        args = action.pop("args", {}) or {}
        if "${" in json.dumps(args):
            problems.append(f"{at}.args: templated ${{…}} arguments have no counterpart")
        ours["call_tool"] = {"tool": action.pop("tool", None), "args": args, "role": action.pop("as", None) or "system"}
    elif kind == "permission":
        change, role, tools = action.pop("action", None), action.pop("role", None), action.pop("tools", None)
        if tools == "*" or not isinstance(tools, list):
            problems.append(f"{at}.tools: name the tools ('*' has no counterpart)")
        ours["set_tool_access"] = {"role": role, str(change): tools if isinstance(tools, list) else []}
    else:
        problems.append(f"{at}.type: {kind!r} actions have no counterpart (a simulated person replies with `reply`)")
    for key in sorted(action):
        problems.append(f"{at}.{key}: no counterpart in agentenv's trigger actions")
    return ours
