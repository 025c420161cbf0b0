"""`agentenv runs export`: stored runs as chat-format JSON lines or Parquet (see `agentenv_rl.export`)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class Format(StrEnum):
    chat_jsonl = "chat-jsonl"
    parquet = "parquet"


def export(
    format: Annotated[Format, typer.Option("--format", help="chat-jsonl (default) or parquet (needs pyarrow).")] = (
        Format.chat_jsonl
    ),
    runs: Annotated[list[str] | None, typer.Option("--runs", help="Run ids or unique prefixes (repeatable).")] = None,
    task: Annotated[str | None, typer.Option(help="Only runs of this task.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (parquet needs one).")] = None,
) -> None:
    """Export stored runs for trainers: messages with tool calls and results (OpenAI chat format), reward and
    metadata, one run per row, streamed."""
    from agentenv import fail, get_host
    from agentenv.config import load_config
    from agentenv_runtime import Records

    from agentenv_rl.export import Report, rows, write_jsonl, write_parquet

    report = Report()
    try:
        records = Records(load_config(), get_host())
        found = rows(records, runs, task, report)
        if format is Format.parquet:
            if output is None:
                fail("--format parquet writes a file: give --output PATH.parquet", 2)
                return
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                fail("--format parquet needs pyarrow: pip install 'agentenv-rl[parquet]'", 2)
            count = write_parquet(found, output)
        elif output is None:
            count = write_jsonl(found, sys.stdout)
        else:
            with output.open("w", encoding="utf-8") as out:
                count = write_jsonl(found, out)
    except LookupError as exc:
        fail(f"{exc}; see `agentenv runs list`", 2)
        return
    left = sum(len(ids) for ids in report.left_out.values())
    head = f"exported {count} runs" + (f" to {output}" if output else "") + (f"; left out {left}:" if left else "")
    print("\n".join([head, *report.lines()]), file=sys.stderr)
