"""`agentenv runs trajectory RUN --agent`: what the agent saw and did, one normalised view for every kind.

A harness kind (claude-code, codex) stores its own normalised view with each prompt, read from its native
transcript (files `agent-trajectory-<n>.json` of the prompt step, with token usage). For every other kind
the view is built from the world trajectory: each `agent_turn` (the prompt and the reply) with the tool
calls its role made since the previous turn, and their results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

VIEW_FILE = re.compile(r"^agent-trajectory-(\d+)\.json$")


def stored_views(record: dict[str, Any], read: Callable[[str], bytes]) -> list[dict[str, Any]]:
    """The views harness kinds stored with the run's prompt steps, in step and prompt order."""
    views = []
    for step in record.get("steps") or []:
        files = ((step.get("output") or {}).get("files") or {}) if isinstance(step, dict) else {}
        named = sorted((int(m.group(1)), key) for name, key in files.items() if (m := VIEW_FILE.match(name)))
        for _, key in named:
            views.append({"step": step.get("id"), **json.loads(read(key).decode())})
    return views


def world_view(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The view of a kind that stores none: entries rebuilt from the world's agent turns and tool calls."""
    entries: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for event in events:
        if event.get("kind") == "tool_call" and not event.get("trigger"):
            pending.append(event)
        elif event.get("kind") == "agent_turn":
            entries.append({"type": "message", "role": "user", "text": str(event.get("user") or "")})
            for call in (c for c in pending if c.get("role") == event.get("role")):
                call_id = f"{call.get('world', '')}#{call['seq']}"
                entries.append(
                    {"type": "tool_call", "id": call_id, "name": call["tool"], "arguments": call.get("args")}
                )
                outcome = call.get("error") or call.get("result")
                entries.append({"type": "tool_result", "id": call_id, "content": json.dumps(outcome, default=str),
                                "error": bool(call.get("error"))})  # fmt: skip
            pending = []
            entries.append({"type": "message", "role": "assistant", "text": str(event.get("agent") or "")})
    return [{"step": None, "kind": "world", "usage": {}, "entries": entries}] if entries else []


def print_views(views: list[dict[str, Any]]) -> None:
    for view in views:
        usage = ", ".join(f"{k} {v}" for k, v in (view.get("usage") or {}).items() if isinstance(v, int | float))
        print(f"== {view.get('step') or 'world'} ({view.get('kind')}){'  ' + usage if usage else ''}")
        for entry in view.get("entries") or []:
            if entry["type"] == "message":
                print(f"{entry['role']:>9}: {_short(entry['text'])}")
            elif entry["type"] == "tool_call":
                refused = entry.get("refused") or {}
                note = f"  (refused for role {refused.get('role')}: {refused.get('code')})" if refused else ""
                print(f"{'call':>9}: {entry['name']} {_short(json.dumps(entry.get('arguments'), default=str))}{note}")
            else:
                print(f"{'error' if entry.get('error') else 'result':>9}: {_short(str(entry.get('content')))}")


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
