"""Per-prompt options `prompt_agent` passes to agents that take them (`respond_with`).

`output_format` is a JSON Schema: the prompt asks for a JSON object matching it, the reply is parsed and
validated, and on a mismatch the agent is asked once more, in the same conversation, with the validation
error; a second mismatch fails the step. `context_id` names a conversation: the same id continues it, a new
one starts a fresh one (no id: the agent's default conversation).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Effort = Literal["low", "medium", "high"]
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class PromptOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    output_format: dict[str, Any] | None = None
    model: str | None = None
    effort: Effort | None = None
    timeout: float | None = Field(default=None, gt=0)
    context_id: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
    """Attached files, name → text: written to the harness's working folder and quoted in the prompt."""


def schema_request(schema: dict[str, Any]) -> str:
    return "\n\nAnswer with only a JSON object (no prose, no code fence) that matches this JSON Schema:\n" + json.dumps(
        schema, sort_keys=True
    )


def schema_problem(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(the parsed object, None) when `text` is a JSON object valid against `schema`, else (None, why not)."""
    import jsonschema

    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    try:
        value = json.loads(fenced.group(1) if fenced else stripped)
    except json.JSONDecodeError as exc:
        return None, f"the reply is not JSON ({exc.msg} at position {exc.pos})"
    if not isinstance(value, dict):
        return None, f"the reply is a JSON {type(value).__name__}, not an object"
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "(root)"
        return None, f"at {where}: {exc.message}"
    return value, None


def attachments(files: dict[str, str]) -> str:
    """The attached files quoted after the prompt (the harness may have no tool to read them itself)."""
    quoted = [
        f'<attachment name="{name}" path="attachments/{name}">\n{text}\n</attachment>' for name, text in files.items()
    ]
    return "\n\n" + "\n".join(quoted) if quoted else ""


def reask(problem: str) -> str:
    return (
        f"Your reply did not match the required JSON Schema: {problem}. "
        "Reply again with only the corrected JSON object."
    )
