"""Small output helpers shared by commands: JSON for scripts, aligned tables for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for index, row in enumerate(cells):
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if index == 0:
            print("  ".join("-" * w for w in widths))


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error for a person and exit; the message should name what to fix."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)
