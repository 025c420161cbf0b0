"""Reading JSON a network client sent: every way it can be unreadable is one error, never a crash.

`json.loads` fails four ways on hostile input, and only one of them is `JSONDecodeError`: bytes that are not
UTF-8 raise `UnicodeDecodeError`, an integer longer than the interpreter's digit limit (4,300) raises a plain
`ValueError`, and nesting deeper than the parser's recursion allows raises `RecursionError`. A served surface that
catches only the first answers the others with HTTP 500. Every server here reads request bodies through
`loads_request`, which turns all four into `JsonRefused` with a message fit for the client.
"""

from __future__ import annotations

import json
import math
from typing import Any


class JsonRefused(ValueError):
    """A request body that is not usable JSON; the message says why and is safe to send back."""


def loads_request(raw: bytes | bytearray | str, *, strict: bool = False) -> Any:
    """The JSON value of a request body, or JsonRefused. `strict` also refuses what standard JSON does not have
    (`NaN`, `Infinity`) and escapes of lone surrogates (`\\ud800`), for a reader (a third-party SDK) that would
    fail to echo them back."""
    try:
        if not strict:
            return json.loads(raw)
        if isinstance(raw, str) and not raw.startswith("\ufeff"):  # json.loads refuses a BOM; the decoder not
            value = _STRICT.decode(raw)
        else:
            value = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite)
        if _may_hold_surrogates(raw):
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        raise JsonRefused("not valid JSON here: a string holds a lone surrogate escape (\\ud800…)") from None
    except json.JSONDecodeError as exc:
        raise JsonRefused(f"not valid JSON: {exc}") from None
    except UnicodeDecodeError:
        raise JsonRefused("not valid JSON: the body is not UTF-8 text") from None
    except RecursionError:
        raise JsonRefused("not valid JSON here: arrays and objects nest too deeply") from None
    except ValueError as exc:  # an integer over sys.get_int_max_str_digits()
        raise JsonRefused(f"not valid JSON here: {exc}") from None


def _may_hold_surrogates(raw: bytes | bytearray | str) -> bool:
    """Whether the value read from `raw` could hold a lone surrogate, which only a `\\u` escape, a surrogate in a
    str itself, or (in bytes, which json.loads decodes with "surrogatepass") an encoded one (lead byte 0xED) can
    put there. The check that finds them encodes the whole value again, which cost more than reading it; a
    WebSocket step message (ASCII, no escapes) skips it."""
    if isinstance(raw, str):
        if "\\u" in raw:
            return True
        if raw.isascii():
            return False
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    return b"\\u" in raw or b"\xed" in raw


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonRefused(f"not valid JSON here: {text[:40]} is out of a float's range")
    return value


def _refuse_constant(name: str) -> Any:
    raise JsonRefused(f"not valid JSON: {name} is not a JSON value")


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)
"""The strict reader, made once (`json.loads` with options builds a decoder per call)."""
