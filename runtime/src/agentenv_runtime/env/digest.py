"""An order-independent digest of an env's tables, kept up to date by SQLite triggers.

Hashing 14 MB of rows takes far longer than an RL step can afford, so the digest is incremental: each data
table has a 256-bit accumulator (the sum of its rows' hashes, modulo 2**256) in the `_agentenv_digest` table,
and triggers add a row's hash on insert and subtract it on delete. Because the accumulators and the triggers
live in the database itself, every snapshot, restore and fork carries a digest that is already right, and
reading it costs one small query. A sum does not depend on row order or rowids, and a row's hash covers only
its values (by `repr`, which is the same in every process), so two envs with the same rows in any order, in
any process, have the same digest.

The machinery is installed on first use (`install`), one full pass over the rows; until then an env pays
nothing on writes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable

DIGEST_TABLE = "_agentenv_digest"
MIX_FUNCTION = "agentenv_digest_mix"
MODULUS = 1 << 256
WIDTH = 32


def _row_hash(values: tuple[object, ...]) -> int:
    return int.from_bytes(hashlib.blake2b(repr(values).encode(), digest_size=WIDTH).digest())


def _mix(accumulator: bytes, sign: int, *values: object) -> bytes:
    """The SQL function the triggers call: the accumulator plus (or minus) one row's hash."""
    total = (int.from_bytes(accumulator) + sign * _row_hash(values)) % MODULUS
    return total.to_bytes(WIDTH)


def register(db: sqlite3.Connection) -> None:
    """Every connection that may write an env's state needs the triggers' function (cheap; do it on connect)."""
    db.create_function(MIX_FUNCTION, -1, _mix, deterministic=True)


def installed(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (DIGEST_TABLE,)).fetchone()
    return row is not None


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]


def install(db: sqlite3.Connection, tables: Iterable[str]) -> None:
    """Add the accumulators (one full pass over the rows) and the triggers that keep them current.

    The schema change runs as one script: the sqlite3 module's statement cache would otherwise hand back a
    CREATE prepared against a database that `deserialize()` has since replaced, which SQLite refuses."""
    script = [f'SAVEPOINT digest_install; CREATE TABLE "{DIGEST_TABLE}" (tbl TEXT PRIMARY KEY, acc BLOB NOT NULL);']
    for table in tables:
        columns = _columns(db, table)
        total = 0
        for row in db.execute(f'SELECT {", ".join(f"{chr(34)}{c}{chr(34)}" for c in columns)} FROM "{table}"'):
            total += _row_hash(tuple(row))
        script.append(
            f"INSERT INTO \"{DIGEST_TABLE}\" VALUES ('{table}', X'{(total % MODULUS).to_bytes(WIDTH).hex()}');"
        )
        for event, terms in (
            ("INSERT", [("1", "NEW")]),
            ("DELETE", [("-1", "OLD")]),
            ("UPDATE", [("-1", "OLD"), ("1", "NEW")]),
        ):
            expression = "acc"
            for sign, alias in terms:
                values = ", ".join(f'{alias}."{c}"' for c in columns)
                expression = f"{MIX_FUNCTION}({expression}, {sign}, {values})"
            script.append(
                f'CREATE TRIGGER "{DIGEST_TABLE}_{table}_{event.lower()}" AFTER {event} ON "{table}" BEGIN '
                f"UPDATE \"{DIGEST_TABLE}\" SET acc = {expression} WHERE tbl = '{table}'; END;"
            )
    script.append("RELEASE digest_install;")
    try:
        db.executescript("\n".join(script))
    except BaseException:
        db.executescript("ROLLBACK TO digest_install; RELEASE digest_install;")
        raise


def read(db: sqlite3.Connection) -> str:
    """The env's digest from its accumulators (install first)."""
    hasher = hashlib.sha256()
    for table, accumulator in db.execute(f'SELECT tbl, acc FROM "{DIGEST_TABLE}" ORDER BY tbl'):
        hasher.update(table.encode() + b"\0" + bytes(accumulator))
    return hasher.hexdigest()
