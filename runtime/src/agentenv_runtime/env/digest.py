"""An order-independent digest of an env's tables, kept up to date by SQLite triggers.

Hashing 14 MB of rows takes far longer than an RL step can afford, so the digest is incremental: each data
table has a 256-bit accumulator (the sum of its rows' hashes, modulo 2**256), and triggers add a row's hash on
insert and subtract it on delete. A sum does not depend on row order or rowids, and a row's hash covers only
its values (by `repr`, the same in every process), so the same rows in any order, in any process, give the
same digest.

The accumulators and triggers are TEMP objects of the env's connection: they take part in its savepoints (a
refused tool call rolls them back with the data), they are not part of the state's bytes (snapshots stay the
app's own tables), and replacing the main database by `deserialize()` neither drops them nor makes SQLite
parse them again on the next statement (main-schema triggers were parsed again after every restore). The env
remembers which accumulators belong to the state bytes it has seen (`Env._remember`), so restoring or
forking from those bytes costs no pass over the rows.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping

TABLE = "_agentenv_digest"
MIX_FUNCTION = "agentenv_digest_mix"
MODULUS = 1 << 256
WIDTH = 32
Accumulators = dict[str, bytes]


def _row_hash(values: tuple[object, ...]) -> int:
    return int.from_bytes(hashlib.blake2b(repr(values).encode(), digest_size=WIDTH).digest())


def _mix(accumulator: bytes, sign: int, *values: object) -> bytes:
    """The SQL function the triggers call: the accumulator plus (or minus) one row's hash."""
    total = (int.from_bytes(accumulator) + sign * _row_hash(values)) % MODULUS
    return total.to_bytes(WIDTH)


def register(db: sqlite3.Connection) -> None:
    """Every connection of an env gets the triggers' function (cheap; done on connect)."""
    db.create_function(MIX_FUNCTION, -1, _mix, deterministic=True)


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f'PRAGMA main.table_info("{table}")')]


def scan(db: sqlite3.Connection, tables: Iterable[str]) -> Accumulators:
    """The accumulators computed from the rows (one full pass)."""
    found = {}
    for table in tables:
        columns = ", ".join(f'"{c}"' for c in _columns(db, table))
        total = sum(_row_hash(tuple(row)) for row in db.execute(f'SELECT {columns} FROM main."{table}"'))
        found[table] = (total % MODULUS).to_bytes(WIDTH)
    return found


def zeros(tables: Iterable[str]) -> Accumulators:
    """Placeholder accumulators for state not counted yet (the env marks its digest stale)."""
    return {table: bytes(WIDTH) for table in tables}


def attach(db: sqlite3.Connection, accumulators: Mapping[str, bytes]) -> None:
    """Create the TEMP accumulator table and triggers on this connection, starting from `accumulators`.

    One script: the sqlite3 module's statement cache could otherwise hand back a CREATE prepared against a
    database that `deserialize()` has since replaced, which SQLite refuses."""
    script = [f'CREATE TEMP TABLE "{TABLE}" (tbl TEXT PRIMARY KEY, acc BLOB NOT NULL);']
    for table, accumulator in accumulators.items():
        script.append(f"INSERT INTO temp.\"{TABLE}\" VALUES ('{table}', X'{accumulator.hex()}');")
        columns = _columns(db, table)
        for event, terms in (("INSERT", ["1 NEW"]), ("DELETE", ["-1 OLD"]), ("UPDATE", ["-1 OLD", "1 NEW"])):
            expression = "acc"
            for term in terms:
                sign, alias = term.split()
                values = ", ".join(f'{alias}."{c}"' for c in columns)
                expression = f"{MIX_FUNCTION}({expression}, {sign}, {values})"
            script.append(
                f'CREATE TEMP TRIGGER "{TABLE}_{table}_{event.lower()}" AFTER {event} ON main."{table}" BEGIN '
                f"UPDATE \"{TABLE}\" SET acc = {expression} WHERE tbl = '{table}'; END;"
            )
    db.executescript("\n".join(script))


def current(db: sqlite3.Connection) -> Accumulators:
    return {table: bytes(acc) for table, acc in db.execute(f'SELECT tbl, acc FROM temp."{TABLE}"')}


def load(db: sqlite3.Connection, accumulators: Mapping[str, bytes]) -> None:
    """Set the accumulators (after the main database was replaced by state whose accumulators are known)."""
    db.executemany(f'UPDATE temp."{TABLE}" SET acc = ? WHERE tbl = ?', [(a, t) for t, a in accumulators.items()])


def of(accumulators: Mapping[str, bytes]) -> str:
    """The env's digest from its accumulators."""
    hasher = hashlib.sha256()
    for table in sorted(accumulators):
        hasher.update(table.encode() + b"\0" + accumulators[table])
    return hasher.hexdigest()
