"""Prompt tokens of a tool list: o200k_base when bpe-openai is installed, else the documented estimate."""

from __future__ import annotations

import json
import sys

import pytest
from agentenv_runtime import first_sentence, openai_tools, short_descriptions, tool_prompt_tokens

TOOLS = [
    {
        "name": "get_ticket",
        "description": "Get one ticket with its conversation. Internal notes are included for staff.",
        "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}, "required": ["ticket_id"]},
    },
    {"name": "list_mailboxes", "description": "List every mailbox\nwith counts.", "inputSchema": {"type": "object"}},
]


def test_short_descriptions_keep_the_first_sentence() -> None:
    assert [t["description"] for t in short_descriptions(TOOLS)] == [
        "Get one ticket with its conversation.",
        "List every mailbox",
    ]
    assert first_sentence("No full stop here") == "No full stop here"
    assert openai_tools(TOOLS)[0]["function"]["parameters"] == TOOLS[0]["inputSchema"]


def test_counted_with_o200k_base_when_installed() -> None:
    count, method = tool_prompt_tokens(TOOLS)
    assert method == "o200k_base" and 40 < count < 150
    assert tool_prompt_tokens(short_descriptions(TOOLS))[0] < count


def test_without_bpe_openai_the_count_is_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # as if the tokens extra were not installed
    count, method = tool_prompt_tokens(TOOLS)
    assert method == "estimate" and count == round(len(json.dumps(openai_tools(TOOLS))) / 3.5)
