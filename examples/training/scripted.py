"""What the trainer examples run with here, where no model weights can be downloaded: scripts of what a model
writes for two tasks, solved and not, and the stand-in model server (agentenv-model-standin) that answers them
over OpenAI's chat completions. A real run puts a model where these are; the glue lines stay the same."""

from __future__ import annotations

import json
from typing import Any

Calls = list[tuple[str, dict[str, Any]]]

REFUND: Calls = [
    ("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}),
    ("close_ticket", {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}),
    ("send_email", {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99 for the boots."}),
]
"""support-refund solved: three tool calls (then any closing text)."""
REFUND_TOOLS = ["get_ticket", "issue_refund", "close_ticket", "send_email"]
"""Enough of the role's 50 tools for the task (the examples trim to them: fewer prompt tokens)."""

ASK = "Could I have your name and zip code, please?"
WRAP_UP = "Both items are exchanged. Is there anything else I can help you with?"
"""What the agent says to τ²'s scripted customer: an identity question first, a wrap-up last (it then stops)."""


def tau2_gold() -> Calls:
    """tau2-retail:0 solved: τ²'s gold actions for the task."""
    from agentenv_tau2.api import retail_task

    return [(action.name, dict(action.arguments)) for action in retail_task("0").gold_actions]


def cases() -> dict[str, tuple[str, Calls, str, str | None]]:
    """name → (task, the tool calls in order, the closing text, an opening message to the user or None)."""
    gold = tau2_gold()
    return {
        "solved": ("support-refund", REFUND, "Refunded 89.99, closed the ticket and emailed Dana.", None),
        "wrong": ("support-refund", REFUND[:1], "Refunded.", None),
        "tau2 solved": ("tau2-retail:0", gold, WRAP_UP, ASK),
        "tau2 wrong": ("tau2-retail:0", gold[:2], WRAP_UP, ASK),
    }


def standin_turns(calls: Calls, closing: str, opening: str | None = None) -> list[dict[str, Any]]:
    """A stand-in model script: the opening (to a simulated user), one tool call a turn, the closing text."""
    said = [{"text": opening}] if opening else []
    return [*said, *({"tool_calls": [{"tool": name, "arguments": args}]} for name, args in calls), {"text": closing}]


def hermes_texts(calls: Calls, closing: str, opening: str | None = None) -> list[str]:
    """The same as raw generated text, the Hermes/Qwen way: `<tool_call>{…}</tool_call>` blocks."""
    blocks = ["<tool_call>\n" + json.dumps({"name": n, "arguments": a}) + "\n</tool_call>" for n, a in calls]
    return [*([opening] if opening else []), *blocks, closing]
