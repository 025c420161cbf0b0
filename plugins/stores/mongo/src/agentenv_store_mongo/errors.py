"""What a failed MongoDB call means for the user: retry it, or stop with one line naming the setting and the fix.

pymongo retries a read once and, on replica sets, a write once. A standalone server, a failover that takes
longer, or a server that sheds load (the `SystemOverloadedError` label) needs more, so the store retries
transient failures itself with exponential backoff and jitter, up to `max_attempts`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from agentenv.config import mask_text

T = TypeVar("T")

SECTION = "[plugins.agentenv-store-mongo.document]"
_LABELS = ("RetryableError", "SystemOverloadedError", "RetryableWriteError")
# The retryable-writes specification's codes: not primary, node recovering or shutting down, network trouble.
_CODES = frozenset({6, 7, 89, 91, 134, 189, 262, 9001, 10058, 10107, 11600, 11602, 13435, 13436})
AUTH_FAILED, UNAUTHORIZED = 18, 13


class MongoStoreError(RuntimeError):
    """A MongoDB call failed (after its retries); the message names the server, the setting and the fix."""


def transient(exc: BaseException) -> bool:
    """Whether another attempt may succeed: a lost connection, a primary that stepped down, an overloaded server."""
    from pymongo.errors import AutoReconnect, OperationFailure, ServerSelectionTimeoutError

    if isinstance(exc, ServerSelectionTimeoutError):  # it already waited `timeout_seconds` for a server
        return False
    if isinstance(exc, AutoReconnect):  # network errors and "not primary" answers
        return True
    if isinstance(exc, OperationFailure):
        return exc.code in _CODES or any(exc.has_error_label(label) for label in _LABELS)
    return False


def retrying(call: Callable[[], T], attempts: int, base_seconds: float = 0.05, cap_seconds: float = 2.0) -> T:
    """`call()`, again after a transient failure (full-jitter exponential backoff), at most `attempts` times."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception as exc:
            if attempt == attempts - 1 or not transient(exc):
                raise
            time.sleep(random.uniform(0, min(cap_seconds, base_seconds * 2**attempt)))
    raise AssertionError("unreachable: the last attempt returns or raises")


def explain(exc: BaseException, url: str, database: str, what: str) -> MongoStoreError:
    """One line for a failed call on `what`: which server, what went wrong, which setting to change and how."""
    from bson.errors import InvalidDocument
    from pymongo.errors import ConfigurationError, ConnectionFailure, OperationFailure

    where = f"MongoDB {mask_text(url)} (database {database!r}): {what}"
    detail = mask_text(" ".join(str(exc).split()) or type(exc).__name__)[:500]
    if isinstance(exc, ConfigurationError):
        return MongoStoreError(
            f"{where}: `url` is not a usable connection string: {detail}; fix `url` under {SECTION} "
            "(mongodb://HOST:PORT/ or mongodb+srv://HOST/)"
        )
    refused = str(exc).lower()
    if isinstance(exc, OperationFailure) and (exc.code == AUTH_FAILED or "authentication failed" in refused):
        return MongoStoreError(
            f"{where}: authentication failed ({detail}); check the user, password and authSource in `url` under "
            f'{SECTION} (keep the password out of the file: url = "env:NAME" or "secret:KEY")'
        )
    if isinstance(exc, OperationFailure) and (exc.code == UNAUTHORIZED or "authentication" in refused):
        if "@" not in url.partition("://")[2].partition("/")[0]:
            return MongoStoreError(
                f"{where}: the server requires a user ({detail}); put one in `url` under {SECTION}: "
                "mongodb://USER:PASSWORD@HOST/ as an env:NAME or secret:KEY reference"
            )
        return MongoStoreError(
            f"{where}: not authorized ({detail}); grant the user in `url` the readWrite role on {database!r} "
            f"(and createIndex, or set create_indexes = false under {SECTION})"
        )
    if isinstance(exc, InvalidDocument):  # pymongo's DocumentTooLarge among them
        return MongoStoreError(
            f"{where}: MongoDB cannot hold this document ({detail}); a document is at most the server's "
            "maxBsonObjectSize (16 MiB on mongod): keep large data in the object store and its key in the document"
        )
    if isinstance(exc, ConnectionFailure):
        return MongoStoreError(
            f"{where}: cannot reach the server ({detail}); check `url` under {SECTION} in .agentenv/config.toml "
            "(an env:NAME or secret:KEY reference works), that the server runs, and that this machine may connect"
        )
    return MongoStoreError(f"{where}: {type(exc).__name__}: {detail}; check the server and `url` under {SECTION}")
