"""Small builders for task dicts used across the step tests."""

from __future__ import annotations

from typing import Any


def task(*steps: dict[str, Any], name: str = "t", **extra: Any) -> dict[str, Any]:
    return {"name": name, "steps": list(steps), **extra}


def deploy(step_id: str = "world", envs: Any = "slack", artifacts: Any = ("acme",), **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "type": "deploy_env", "envs": envs, "artifacts": list(artifacts), **fields}


def clock(env: str = "world", start: str = "2026-12-01T09:00:00Z", **fields: Any) -> dict[str, Any]:
    return {"id": f"clock_{env}", "type": "sync_env_clock", "env": env, "start": start, **fields}


def scripted(
    step_id: str, env: str, actions: list[dict[str, Any]], *more_turns: list[dict[str, Any]], **fields: Any
) -> dict[str, Any]:
    policy = {"turn": [{"actions": actions}, *({"actions": a} for a in more_turns)]}
    return {
        "id": step_id,
        "type": "deploy_agent",
        "env": env,
        "kind": "scripted",
        "settings": {"policy_data": policy},
        **fields,
    }


def prompt(step_id: str, agent: str, text: str = "go", **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "type": "prompt_agent", "agent": agent, "prompt": text, **fields}


def calls(events: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "tool_call" and e["tool"] == tool]
