"""Raw generated text as chat messages, for trainers that hand the environment what the model wrote (SkyRL, verl).

A model trained on the Hermes/Qwen format writes its calls as `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
blocks; one fine-tuned on OpenAI's format may write the message JSON itself (`{"tool_calls": [...]}`, a bare
`{"name", "arguments"}` call, or a list of calls). `assistant_message` reads either into an OpenAI assistant
message, which `apply_assistant` plays; text without a call is the final answer (a `<think>` block left out).
A call that cannot be read still becomes a call, with no name, so that the episode answers it with an error
the model can learn from instead of taking the text as its answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
FENCE = re.compile(r"^```[a-zA-Z]*\n(.*)\n```$", re.DOTALL)


def _call(index: int, name: Any, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": text}}


def _json_calls(value: Any) -> list[dict[str, Any]] | None:
    """Calls in a parsed JSON value of OpenAI's shapes; None when it holds none."""
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = [c.get("function", c) if isinstance(c, dict) else c for c in value["tool_calls"]]
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]
    if isinstance(value, dict) and isinstance(value.get("name"), str) and "arguments" in value:
        value = [value]
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in value):
        return None
    return [_call(i, c["name"], c.get("arguments", {})) for i, c in enumerate(value)]


def assistant_message(text: str) -> dict[str, Any]:
    """What the model wrote as an OpenAI assistant message (`tool_calls` when it called tools)."""
    blocks = TOOL_CALL.findall(text)
    if blocks:
        calls = []
        for index, block in enumerate(blocks):
            try:
                found = _json_calls(json.loads(block))
            except json.JSONDecodeError:
                found = None
            calls.extend(found or [_call(index, None, block)])
        content = TOOL_CALL.sub("", THINK.sub("", text)).strip() or None
        return {"role": "assistant", "content": content, "tool_calls": calls}
    stripped = THINK.sub("", text).strip()
    fenced = FENCE.match(stripped)
    candidate = fenced.group(1) if fenced else stripped
    if candidate[:1] in "[{":
        try:
            found = _json_calls(json.loads(candidate))
        except json.JSONDecodeError:
            found = None
        if found:
            return {"role": "assistant", "content": None, "tool_calls": found}
    return {"role": "assistant", "content": stripped}


def tools_prompt(tools: list[dict[str, Any]]) -> str:
    """A system prompt offering `tools` (OpenAI function tools) in the Hermes/Qwen `<tool_call>` format, for
    trainers whose chat template does not render tools itself."""
    listed = "\n".join(json.dumps(tool, separators=(",", ":")) for tool in tools)
    return (
        "You can use these tools, each described by a JSON Schema:\n<tools>\n"
        f"{listed}\n</tools>\n\n"
        "To call one, write a block\n<tool_call>\n"
        '{"name": "TOOL_NAME", "arguments": {ARGUMENTS}}\n</tool_call>\n'
        "(several blocks call several tools). Their results come back as tool messages. When you are done, "
        "reply with your final answer and no tool call."
    )
