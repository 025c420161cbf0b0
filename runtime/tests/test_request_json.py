"""`loads_request(strict=True)` refuses NaN, Infinity and lone surrogates however they arrive (an escape, a
surrogate in the str itself, an encoded one in bytes), and reads everything else as `json.loads` does."""

from __future__ import annotations

import json

import pytest
from agentenv_runtime import JsonRefused, loads_request

REFUSED = {
    "escape in a str": '{"id": "\\ud800"}',
    "escape in a key": '{"\\udfff": 1}',
    "escape in bytes": b'{"id": "\\ud800"}',
    "surrogate in the str itself": '{"id": "\ud800"}',
    "encoded surrogate in bytes": b'{"id": "\xed\xa0\x80"}',
    "NaN": '{"id": NaN}',
    "Infinity": b"[Infinity]",
    "a float out of range": "[1e999]",
    "a byte order mark": '\ufeff{"id": 1}',
}
READ = {
    "ASCII": '{"type": "step", "data": {"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}}',
    "non-ASCII text": '{"name": "Zoë — 東京"}',
    "non-ASCII bytes": '{"name": "Zoë — 東京"}'.encode(),
    "Hangul (bytes with lead byte 0xED)": '{"name": "한국어"}'.encode(),
    "a surrogate pair escape": '{"emoji": "\\ud83d\\ude00"}',
    "an escape that is no surrogate": '{"e": "\\u00e9"}',
    "a bytearray": bytearray(b'{"n": 1.5}'),
}


@pytest.mark.parametrize("raw", REFUSED.values(), ids=REFUSED.keys())
def test_strict_reading_refuses(raw: str | bytes) -> None:
    with pytest.raises(JsonRefused):
        loads_request(raw, strict=True)


@pytest.mark.parametrize("raw", READ.values(), ids=READ.keys())
def test_strict_reading_reads_what_json_reads(raw: str | bytes) -> None:
    assert loads_request(raw, strict=True) == json.loads(raw)


def test_only_strict_reading_refuses_nan() -> None:
    assert loads_request('{"id": NaN}')["id"] != loads_request('{"id": NaN}')["id"]  # NaN, read
