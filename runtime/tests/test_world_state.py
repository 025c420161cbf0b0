"""State digests, checkpoints and copy-on-write forks: what RL resets and parallel rollouts rely on."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from agentenv_runtime import Env, World, tool

SCHEMA = """
CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, score REAL, raw BLOB);
CREATE TABLE tags (note_id INTEGER NOT NULL, tag TEXT NOT NULL);
"""


class NotesEnv(Env):
    """Two tables with text, real, blob and null values; tools that insert, update and delete."""

    name = "notes"
    schema = SCHEMA

    @tool
    def add(self, body: str, score: float | None = None) -> dict[str, Any]:
        """Add a note.

        Args:
            body: The text.
            score: Optional score.
        """
        cur = self.db.execute("INSERT INTO notes (body, score, raw) VALUES (?, ?, ?)", (body, score, body.encode()))
        self.db.execute("INSERT INTO tags VALUES (?, 'new')", (cur.lastrowid,))
        return {"id": cur.lastrowid}

    @tool
    def edit(self, note_id: int, body: str) -> dict[str, Any]:
        """Change a note's text.

        Args:
            note_id: Which note.
            body: The new text.
        """
        self.db.execute("UPDATE notes SET body = ?, raw = ? WHERE id = ?", (body, body.encode(), note_id))
        return {"id": note_id}

    @tool
    def drop(self, note_id: int) -> dict[str, Any]:
        """Delete a note and its tags.

        Args:
            note_id: Which note.
        """
        self.db.execute("DELETE FROM notes WHERE id = ?", (note_id,))
        self.db.execute("DELETE FROM tags WHERE note_id = ?", (note_id,))
        return {"id": note_id}


def world_with(*bodies: str) -> World:
    world = World([NotesEnv()])
    for body in bodies:
        assert world.call("add", {"body": body, "score": 0.5}).ok
    return world


def test_the_digest_ignores_row_order_and_rowids() -> None:
    forwards, backwards = world_with("a", "b", "c"), World([NotesEnv()])
    for body, note_id in (("c", 3), ("b", 2), ("a", 1)):  # same rows, inserted in the other order
        backwards.env("notes").db.execute(
            "INSERT INTO notes (id, body, score, raw) VALUES (?, ?, 0.5, ?)", (note_id, body, body.encode())
        )
        backwards.env("notes").db.execute("INSERT INTO tags VALUES (?, 'new')", (note_id,))
    assert forwards.state_digest() == backwards.state_digest()


def test_the_digest_follows_inserts_updates_and_deletes_incrementally() -> None:
    world = world_with("a", "b")
    start = world.state_digest()  # installs the incremental digest
    assert world.call("edit", {"note_id": 1, "body": "changed"}).ok
    edited = world.state_digest()
    assert edited != start
    assert edited == world_with("changed", "b").state_digest(), "incremental equals computed from scratch"
    assert world.call("edit", {"note_id": 1, "body": "a"}).ok
    assert world.state_digest() == start
    assert world.call("drop", {"note_id": 2}).ok
    assert world.state_digest() == world_with("a").state_digest()


def test_a_failed_call_leaves_the_digest_unchanged() -> None:
    world = world_with("a")
    before = world.state_digest()
    assert not world.call("add", {"body": 3}).ok  # refused by the schema, nothing runs
    assert world.state_digest() == before


def test_the_digest_table_is_not_exported_as_data() -> None:
    world = world_with("a")
    world.state_digest()
    assert set(world.env("notes").export()) == {"notes", "tags"}


def test_a_reset_to_a_checkpoint_gives_the_same_digest_every_time() -> None:
    world = world_with("a", "b")
    start = world.checkpoint()
    expected = world.state_digest()
    for round_ in range(5):
        assert world.call("add", {"body": f"round {round_}"}).ok
        assert world.call("drop", {"note_id": 1}).ok
        assert world.state_digest() != expected
        world.restore_checkpoint(start)
        assert world.state_digest() == expected
        assert world.query("notes", "SELECT body FROM notes ORDER BY id") == [{"body": "a"}, {"body": "b"}]


def test_forks_diverge_independently_and_leave_the_parent_alone() -> None:
    parent = world_with("a")
    base = parent.state_digest()
    left, right = parent.fork(), parent.fork()
    assert left.state_digest() == right.state_digest() == base
    assert left.call("add", {"body": "left"}).ok
    assert right.call("edit", {"note_id": 1, "body": "right"}).ok
    assert len({left.state_digest(), right.state_digest(), base}) == 3
    assert parent.state_digest() == base
    assert parent.query("notes", "SELECT body FROM notes") == [{"body": "a"}]
    assert right.query("notes", "SELECT body FROM notes") == [{"body": "right"}]
    grandchild = left.fork()
    assert grandchild.state_digest() == left.state_digest()
    assert grandchild.call("drop", {"note_id": 1}).ok
    assert left.query("notes", "SELECT COUNT(*) AS n FROM notes") == [{"n": 2}]


def test_a_checkpoint_restores_into_a_fork_and_its_bytes_form_round_trips() -> None:
    parent = world_with("a")
    point = parent.checkpoint()
    child = parent.fork()
    assert child.call("add", {"body": "more"}).ok
    child.restore_checkpoint(point)
    assert child.state_digest() == parent.state_digest()
    other = World([NotesEnv()])
    other.restore(parent.snapshot())
    assert other.state_digest() == parent.state_digest()


def test_the_digest_is_the_same_in_another_process() -> None:
    probe = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from test_world_state import world_with
        print(world_with("a", "b", "ünï").state_digest())
        """
    )
    here = str(__import__("pathlib").Path(__file__).parent)
    other = subprocess.run([sys.executable, "-c", probe, here], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == world_with("a", "b", "ünï").state_digest()


def test_a_checkpoint_from_before_the_digest_existed_still_digests_right() -> None:
    world = world_with("a")
    early = world.checkpoint()  # no digest machinery in these bytes
    expected = world.state_digest()
    assert world.call("add", {"body": "b"}).ok
    world.restore_checkpoint(early)
    assert world.state_digest() == expected


def test_a_held_checkpoint_is_rewound_and_matches_a_restore() -> None:
    world = world_with("a", "b")
    point = world.checkpoint()
    world.restore_checkpoint(point, hold=True)
    digest = world.state_digest()  # first digest while the hold is open
    for round_ in range(3):
        assert world.call("add", {"body": f"more {round_}"}).ok
        assert world.call("drop", {"note_id": 1}).ok
        assert not world.call("add", {"body": 5}).ok  # a refused call inside the hold changes nothing
        world.restore_checkpoint(point, hold=True)
        assert world.state_digest() == digest
        assert world.query("notes", "SELECT body FROM notes ORDER BY id") == [{"body": "a"}, {"body": "b"}]
    held = world.env("notes")
    assert held._held is point.envs["notes"], "the later resets rolled back to the hold"
    fork = world.fork()  # a fork of a held world sees its current state and holds nothing itself
    assert fork.state_digest() == digest and fork.env("notes")._held is None
    assert world.call("add", {"body": "c"}).ok
    world.restore(world.snapshot())  # a plain restore releases the hold first
    assert held._held is None


def test_a_hold_for_other_bytes_is_not_rewound() -> None:
    world = world_with("a")
    first = world.checkpoint()
    world.restore_checkpoint(first, hold=True)
    assert world.call("add", {"body": "b"}).ok
    second = world.checkpoint()
    world.restore_checkpoint(second, hold=True)  # another point: restored, then held
    assert world.query("notes", "SELECT COUNT(*) AS n FROM notes") == [{"n": 2}]
    world.restore_checkpoint(first, hold=True)
    assert world.query("notes", "SELECT COUNT(*) AS n FROM notes") == [{"n": 1}]


def test_read_only_queries_refuse_writes_and_leave_state_alone() -> None:
    world = world_with("a")
    env = world.env("notes")
    before = world.state_digest()
    for sql in (
        "DELETE FROM notes",
        "UPDATE notes SET body = 'x'",
        "WITH doomed AS (SELECT id FROM notes) DELETE FROM notes WHERE id IN doomed",
        "/* a comment first */ DELETE FROM notes",
        "PRAGMA writable_schema = 1",
        "ATTACH '' AS other",
    ):
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            env.read_only(sql)
    assert world.state_digest() == before
    assert env.query("WITH n AS (SELECT body FROM notes) SELECT body FROM n") == [{"body": "a"}]
    assert env.query("-- a comment\nSELECT COUNT(*) AS n FROM notes") == [{"n": 1}]
    assert world.call("add", {"body": "b"}).ok  # the env's own writes are allowed again afterwards


def test_read_only_selects_do_not_make_the_env_prepare_its_statements_again() -> None:
    """Installing an authorizer for a grading query expired every prepared statement of the connection; each
    one then went through SQLite's parser again (a fifth of an RL episode). SQLite asks a connection's
    authorizer whenever it prepares a statement, so one that counts its calls counts the preparations."""
    world = world_with("a")
    env = world.env("notes")
    prepared: list[int] = []
    env.db.set_authorizer(lambda action, *_: prepared.append(action) or sqlite3.SQLITE_OK)
    lookup = "SELECT body FROM notes WHERE id = ?"
    env.db.execute(lookup, (1,)).fetchall()
    assert prepared  # the first run prepares the statement
    for round_ in range(3):
        assert env.read_only("SELECT COUNT(*) FROM notes WHERE body = 'a'").fetchone()[0] == 1
        prepared.clear()
        env.db.execute(lookup, (1,)).fetchall()
        assert prepared == []  # still the cached statement
        env.db.execute(f"SELECT {round_} FROM notes").fetchall()
        assert prepared  # and the counter is still in place: a new statement is counted


def digest_triggers(world: World) -> int:
    query = "SELECT COUNT(*) FROM sqlite_temp_master WHERE type = 'trigger'"
    return int(world.env("notes").db.execute(query).fetchone()[0])


def test_a_fork_that_only_reads_makes_no_digest_triggers_until_it_writes() -> None:
    """Making the triggers costs about 1.5 ms a database, far more than a fork; a fork that only reads (a served
    session looking things up) keeps the digest of the bytes it was made from instead."""
    parent = world_with("a", "b")
    base = parent.state_digest()
    reader = parent.fork()
    assert reader.query("notes", "SELECT COUNT(*) AS n FROM notes") == [{"n": 2}]  # its database now exists
    assert reader.state_digest() == base and digest_triggers(reader) == 0
    assert reader.call("add", {"body": "c", "score": 0.5}).ok  # the first write through the env makes them
    assert digest_triggers(reader) == 6  # insert, update and delete on both tables
    assert reader.state_digest() == world_with("a", "b", "c").state_digest()
    assert reader.call("drop", {"note_id": 3}).ok
    assert reader.state_digest() == base


def test_a_write_that_bypasses_the_env_before_its_triggers_exist_still_shows_in_the_digest() -> None:
    parent = world_with("a")
    parent.state_digest()
    child = parent.fork()
    child.env("notes").db.execute("DELETE FROM tags")  # straight to the database: no trigger counts it
    expected = world_with("a")
    expected.env("notes").db.execute("DELETE FROM tags")
    assert child.state_digest() == expected.state_digest() != parent.state_digest()
    assert child.call("add", {"body": "b"}).ok and expected.call("add", {"body": "b"}).ok
    assert child.state_digest() == expected.state_digest()


def test_a_held_reset_of_a_fork_that_only_read_makes_the_triggers_first() -> None:
    parent = world_with("a")
    point = parent.checkpoint()
    start = parent.state_digest()
    child = parent.fork()
    child.query("notes", "SELECT body FROM notes")
    child.restore_checkpoint(point, hold=True)  # the hold savepoint must not be opened before the triggers
    assert digest_triggers(child) == 6 and child.env("notes")._held is not None
    for _ in range(2):
        assert child.call("add", {"body": "b"}).ok and child.state_digest() != start
        child.restore_checkpoint(point, hold=True)  # rolled back to the hold
        assert child.state_digest() == start


def test_threads_reading_one_env_at_once_do_not_deadlock() -> None:
    """Servers that run synchronous tools on worker threads (the MCP SDK's MCPServer does) read one env from
    several threads. A Python callback SQLite runs under the connection's mutex (an authorizer kept installed
    for read-only checks was one) deadlocked them: one thread held the mutex waiting for the GIL, another held
    the GIL waiting for the mutex. Run in a child process, so a deadlock fails the test instead of hanging it."""
    probe = textwrap.dedent(
        """
        import sys, threading
        sys.path.insert(0, sys.argv[1])
        from test_world_state import world_with

        env = world_with("a", "b", "c").env("notes")

        def read():
            for index in range(300):
                env.db.execute("SELECT body FROM notes WHERE id = ?", (index % 3 + 1,)).fetchall()
                env.read_only("SELECT COUNT(*) FROM tags").fetchone()

        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print("done")
        """
    )
    here = str(__import__("pathlib").Path(__file__).parent)
    try:
        child = subprocess.run([sys.executable, "-c", probe, here], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("threads sharing an env's connection deadlocked") from None
    assert child.returncode == 0 and child.stdout.strip() == "done", child.stderr[-2000:]


class Seer(NotesEnv):
    """Remembers every world that composed it (what a web front end or a browser env keeps to reach its world)."""

    name = "seer"

    def joined(self, world: Any) -> None:
        self.worlds = [*getattr(self, "worlds", []), world]


def test_an_env_is_told_of_each_world_that_composes_it() -> None:
    env = Seer()
    world = World([NotesEnv(), env])
    assert env.worlds == [world]
    clone = world.fork()
    forked = clone.env("seer")
    assert forked is not env and forked.worlds == [world, clone]  # type: ignore[attr-defined]
    assert env.worlds == [world]  # the parent's env still knows only its own world
    late = Seer()
    other = World([NotesEnv()])
    other.add_env(late)
    assert late.worlds == [other]


def test_held_restores_keep_the_schema_round_after_round() -> None:
    """A world put back to one checkpoint again and again (an RL reset loop), without the state digest on: the
    hold savepoint taken right after a restore once lost the schema on the second rewind ("no such table")."""
    template = World([NotesEnv()])
    assert template.call("add", {"body": "first"}).ok
    world = template.fork()
    start = world.checkpoint()
    for _ in range(4):
        outcome = world.call("add", {"body": "again"})
        assert outcome.ok, outcome.error
        world.restore_checkpoint(start, hold=True)
    assert world.query("notes", "SELECT body FROM notes") == [{"body": "first"}]
