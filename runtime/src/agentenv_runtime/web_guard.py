"""What a world served without tokens must refuse: callers that are not this machine, and browsers on other sites.

A token-less server binds loopback only, but a page open in any local browser can still send it requests: a
"simple" cross-site POST (`text/plain`, a form) needs no preflight, so without a check it calls tools and moves
the clock. The rules here are the ones every served surface (the gateway, OpenEnv, A2A) applies:

- the Host header names this machine (against DNS rebinding);
- a state-changing request from a browser page on another origin is refused: its `Origin` must be the server's
  own (or absent, as from every non-browser client), and `Sec-Fetch-Site` must not say `cross-site`;
- a state-changing request with a body declares JSON (`application/json` or `…+json`): no browser can send that
  cross-site without a CORS preflight, which these servers never grant.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "127.0.0.1", "::1", "[::1]"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing: a cross-site page may read the answer of none of them (no CORS headers)."""


def is_loopback(host: str) -> bool:
    """Whether a host name or address (IPv6 optionally in brackets) is this machine; names are case-insensitive."""
    host = host.lower().rstrip(".")
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name part of a Host header (`[::1]:8000` → `[::1]`, `localhost:80` → `localhost`)."""
    if header.startswith("["):
        return header[: header.find("]") + 1]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def host_is_local(header: str) -> bool:
    """Whether a Host header names this machine (guards a token-less server against DNS rebinding)."""
    return is_loopback(host_name(header))


def cross_site_refusal(method: str, headers: Mapping[str, str], *, has_body: bool) -> tuple[int, str] | None:
    """(status, message) when a request to a token-less server must be refused as cross-site, else None.

    `headers` maps lower-case names to values; `has_body` is whether the request carries a body."""
    if method.upper() in SAFE_METHODS:
        return None
    foreign = origin_refusal(headers)
    if foreign is not None:
        return 403, foreign
    if has_body and not is_json_type(headers.get("content-type", "")):
        shown = headers.get("content-type") or "none"
        return 415, f"Content-Type {shown!r}: send the body as JSON with Content-Type: application/json"
    return None


def origin_refusal(headers: Mapping[str, str]) -> str | None:
    """Why a request (or a WebSocket opening) comes from another site's page, or None when it does not.

    Browsers send `Origin` on every cross-origin POST and WebSocket opening; non-browser clients send none."""
    origin = headers.get("origin")
    if origin is not None and not same_origin(origin, headers.get("host", "")):
        return (
            f"Origin {origin!r}: this server has no tokens, so requests from other sites' pages are refused; "
            "call it from a non-browser client"
        )
    if headers.get("sec-fetch-site", "").lower() == "cross-site":
        return "Sec-Fetch-Site: cross-site: this server has no tokens, so other sites' pages may not call it"
    return None


def same_origin(origin: str, host: str) -> bool:
    """Whether an Origin header names the server at `host` itself (scheme http or https, same host and port)."""
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False  # "null" (a sandboxed page, a file) and anything odd
    return parts.netloc.lower() == host.lower()


Receive = Callable[[], Awaitable[dict[str, Any]]]


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """An ASGI request's whole body, or None once it is over `limit` bytes (the rest is left unread)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A `receive` that yields an already-read body once, then the connection's own messages (disconnect)."""
    sent = False

    async def again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def is_json_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
