"""The one error a harness kind raises: what went wrong, and what to do about it."""

from __future__ import annotations


class HarnessError(RuntimeError):
    """A harness that cannot start (missing binary, unreachable endpoint) or that failed while running."""
