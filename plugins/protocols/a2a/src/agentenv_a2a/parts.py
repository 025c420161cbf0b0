"""Between A2A message parts and `AgentResponse`: text parts joined, data parts as `structured`.

Kept free of SDK imports at module level; the protobuf helpers are imported where they are used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentenv.contracts import AgentResponse


def response_from_parts(parts: Sequence[Any]) -> AgentResponse:
    """Text parts joined by newlines; one dict data part is `structured`, several are `{"data": [...]}`."""
    from google.protobuf.json_format import MessageToDict

    texts = [part.text for part in parts if part.HasField("text")]
    data = [_whole_numbers(MessageToDict(part.data)) for part in parts if part.HasField("data")]
    structured: dict[str, Any] | None = None
    if len(data) == 1 and isinstance(data[0], dict):
        structured = data[0]
    elif data:
        structured = {"data": data}
    return AgentResponse(text="\n".join(texts), structured=structured)


def parts_from_response(response: AgentResponse) -> list[Any]:
    """The A2A parts of an answer: its text, then its structured output as a data part."""
    from a2a.helpers import new_data_part, new_text_part

    parts = []
    if response.text or response.structured is None:
        parts.append(new_text_part(response.text, media_type="text/plain"))
    if response.structured is not None:
        plain = json.loads(json.dumps(response.structured, default=str))  # protobuf takes JSON types only
        parts.append(new_data_part(plain, media_type="application/json"))
    return parts


def _whole_numbers(value: Any) -> Any:
    """protobuf `Value` keeps every number as a double; give whole numbers back as ints, as JSON would."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(item) for item in value]
    return value
