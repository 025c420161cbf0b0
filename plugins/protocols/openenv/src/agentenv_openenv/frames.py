"""The common WebSocket frames read and written directly: whole text messages in single frames.

Nearly every message of an OpenEnv session is one small text frame each way. `websockets`' sans-I/O parser
handles every case (fragments, control frames, limits, the closing handshake) through a generator, and that
generality cost a tenth of the server's CPU per step. `client_texts` reads the common case in a few integer
operations and answers None for anything else, so the caller hands those bytes to the full protocol unchanged:
the fast path never accepts what the protocol would refuse (it declines oversized or non-UTF-8 messages rather
than judging them).
"""

from __future__ import annotations

FIN_TEXT = 0x81
"""First byte of a final (unfragmented) text frame with no extension bits."""
MASKED = 0x80
LENGTH_16 = 126
LENGTH_64 = 127


def client_texts(data: bytes, max_size: int | None) -> list[str] | None:
    """The messages in `data` if it is nothing but whole, final, masked text frames (payloads up to 64 KiB and
    `max_size`) holding valid UTF-8; otherwise None, with nothing consumed."""
    messages: list[str] = []
    at, end = 0, len(data)
    while at < end:
        if end - at < 6 or data[at] != FIN_TEXT:
            return None
        second = data[at + 1]
        size = second & 0x7F
        if not second & MASKED or size == LENGTH_64:
            return None
        at += 2
        if size == LENGTH_16:
            size = int.from_bytes(data[at : at + 2], "big")
            at += 2
        if (max_size is not None and size > max_size) or end - at < 4 + size:
            return None
        mask, at = data[at : at + 4], at + 4
        masked, at = data[at : at + size], at + size
        key = (mask * (size // 4 + 1))[:size]
        payload = (int.from_bytes(masked, "big") ^ int.from_bytes(key, "big")).to_bytes(size, "big")
        try:
            messages.append(payload.decode("utf-8"))
        except UnicodeDecodeError:
            return None
    return messages


def server_text(payload: bytes) -> bytes:
    """One final, unmasked text frame (a server never masks) holding `payload`."""
    size = len(payload)
    if size < LENGTH_16:
        return bytes((FIN_TEXT, size)) + payload
    if size < 1 << 16:
        return bytes((FIN_TEXT, LENGTH_16)) + size.to_bytes(2, "big") + payload
    return bytes((FIN_TEXT, LENGTH_64)) + size.to_bytes(8, "big") + payload
