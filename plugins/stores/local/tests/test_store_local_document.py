"""The `sqlite` document store: the kernel's conformance kit plus local-file behaviour."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from agentenv_store_local._files import StoreFileError
from agentenv_store_local.document import SqliteDocumentStore, json_equal
from agentenv_testing.stores import DocumentStoreConformance
from pydantic import ValidationError


def make(path: Path) -> SqliteDocumentStore:
    return SqliteDocumentStore({"path": str(path)})


class TestSqliteDocumentConformance(DocumentStoreConformance):
    def make_store(self, tmp_path: Path) -> SqliteDocumentStore:
        return make(tmp_path / "data" / "records.sqlite3")


# -- settings and files ---------------------------------------------------------------------------


def test_default_path_is_resolved_against_the_current_directory(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTENV_CONFIG", raising=False)
    store = SqliteDocumentStore()
    expected = tmp_path / ".agentenv" / "data" / "records.sqlite3"
    assert store.path == expected
    assert store.get("runs", "1") is None and store.query("runs") == [] and not store.delete("runs", "1")
    assert not (tmp_path / ".agentenv").exists(), "reading creates nothing; the first write makes the database"
    store.put("runs", "1", {"n": 1})
    assert expected.is_file()
    monkeypatch.chdir(tmp_path.parent)  # moving away later does not move the database
    assert store.get("runs", "1") == {"n": 1}
    store.close()


def test_a_relative_path_is_taken_against_the_project_of_the_config(tmp_path: Path, monkeypatch: Any) -> None:
    """The config is found by walking up; its relative paths mean the same folder from anywhere in the project."""
    (tmp_path / ".agentenv").mkdir()
    (tmp_path / ".agentenv" / "config.toml").write_text("")
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    monkeypatch.delenv("AGENTENV_CONFIG", raising=False)
    assert SqliteDocumentStore().path == tmp_path.resolve() / ".agentenv" / "data" / "records.sqlite3"
    assert SqliteDocumentStore({"path": "runs.db"}).path == tmp_path.resolve() / "runs.db"
    assert not (tmp_path / "a" / "b" / ".agentenv").exists()


def test_unknown_setting_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="pth"):
        SqliteDocumentStore({"pth": str(tmp_path / "x.sqlite3")})


def test_settings_model_instance_is_accepted(tmp_path: Path) -> None:
    settings = SqliteDocumentStore.Settings.model_validate({"path": str(tmp_path / "s.sqlite3")})
    store = SqliteDocumentStore(settings)
    assert store.path == tmp_path / "s.sqlite3"


def test_file_that_is_not_a_database_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "records.sqlite3"
    bad.write_bytes(b"this is a text file, not a database\n" * 200)
    with pytest.raises(StoreFileError) as err:
        make(bad)
    message = str(err.value)
    assert str(bad) in message
    assert "`path`" in message and "[plugins.agentenv-store-local.document]" in message
    assert bad.read_bytes().startswith(b"this is a text file")  # left untouched


def test_directory_as_database_path_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(StoreFileError, match="a-folder"):
        make(folder)


def test_wal_mode_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    with make(path) as store:
        store.put("runs", "1", {"n": 1})
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reopened = make(path)
    assert reopened.get("runs", "1") == {"n": 1}
    reopened.close()
    assert reopened.get("runs", "1") == {"n": 1}  # reopens on use after close


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ([1, 2], "must be a dict"),
        ({"x": float("nan")}, "not JSON-serialisable"),
        ({"x": object()}, "not JSON-serialisable"),
        ({"x": {1, 2}}, "not JSON-serialisable"),
    ],
)
def test_bad_documents_are_refused_and_change_nothing(tmp_path: Path, doc: Any, match: str) -> None:
    store = make(tmp_path / "r.sqlite3")
    store.put("runs", "1", {"n": 1})
    with pytest.raises(TypeError, match=match):
        store.put("runs", "1", doc)
    assert store.query("runs") == [{"n": 1}]


@pytest.mark.parametrize(("collection", "doc_id"), [("", "1"), ("runs", ""), (None, "1"), ("runs", 7)])
def test_bad_names_are_refused(tmp_path: Path, collection: Any, doc_id: Any) -> None:
    store = make(tmp_path / "r.sqlite3")
    with pytest.raises(ValueError, match="must be a non-empty string"):
        store.put(collection, doc_id, {})
    with pytest.raises(ValueError, match="must be a non-empty string"):
        store.get(collection, doc_id)


@pytest.mark.parametrize("limit", [-1, "2", 1.5, True])
def test_bad_limit_is_refused(tmp_path: Path, limit: Any) -> None:
    store = make(tmp_path / "r.sqlite3")
    with pytest.raises(ValueError, match="limit"):
        store.query("runs", limit=limit)


def test_limit_zero_is_empty(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    store.put("runs", "1", {"n": 1})
    assert store.query("runs", limit=0) == []


def test_bad_where_is_refused(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    with pytest.raises(TypeError, match="where"):
        store.query("runs", [("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="field names"):
        store.query("runs", {1: "a"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"where\['x'\]"):
        store.query("runs", {"x": object()})


# -- query semantics beyond the kit ---------------------------------------------------------------


def test_query_on_object_and_list_values(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    store.put("runs", "1", {"meta": {"b": 2, "a": [1, True]}, "tags": ["x", "y"]})
    store.put("runs", "2", {"meta": {"a": [1, 1], "b": 2}, "tags": ["y", "x"]})
    assert store.query("runs", {"meta": {"a": [1, True], "b": 2}}) == [store.get("runs", "1")]
    assert store.query("runs", {"meta": {"a": [1, 1], "b": 2}}) == [store.get("runs", "2")]
    assert store.query("runs", {"tags": ["y", "x"]}) == [store.get("runs", "2")]
    assert store.query("runs", {"tags": ["x"]}) == []
    assert store.query("runs", {"tags": "x"}) == []


def test_query_with_odd_field_names(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    doc = {"a.b": 1, 'say "hi"': "yes", "naïve": "ü", "sp ace": True, "back\\slash": None, "new\nline": 3}
    store.put("odd", "1", doc)
    store.put("odd", "2", {k: "other" for k in doc})
    for field, value in doc.items():
        assert store.query("odd", {field: value}) == [doc], field
    assert store.query("odd", doc) == [doc]


def test_query_numbers(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    store.put("n", "int", {"v": 2})
    store.put("n", "float", {"v": 2.5})
    store.put("n", "str", {"v": "2"})
    store.put("n", "big", {"v": 2**70})
    assert [d["v"] for d in store.query("n", {"v": 2.0})] == [2]
    assert [d["v"] for d in store.query("n", {"v": 2.5})] == [2.5]
    assert [d["v"] for d in store.query("n", {"v": "2"})] == ["2"]
    assert [d["v"] for d in store.query("n", {"v": 2**70})] == [2**70]


def test_limit_applies_after_python_side_filters(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    for i in range(6):
        store.put("runs", str(i), {"i": i, "tags": ["even"] if i % 2 == 0 else ["odd"]})
    assert [d["i"] for d in store.query("runs", {"tags": ["even"]}, limit=2)] == [4, 2]


def test_json_equal_is_strict_about_booleans() -> None:
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal([0], [False])
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal([1], {"0": 1})
    assert json_equal(None, None)


def test_order_is_shared_between_instances_on_one_file(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    first, second = make(path), make(path)
    first.put("runs", "a", {"n": "a"})
    second.put("runs", "b", {"n": "b"})
    first.put("runs", "c", {"n": "c"})
    second.put("runs", "a", {"n": "a2"})
    assert [d["n"] for d in first.query("runs")] == ["a2", "c", "b"]
    assert second.delete("runs", "c") is True
    assert first.get("runs", "c") is None


# -- concurrency ----------------------------------------------------------------------------------


def test_many_threads_write_and_read_at_once(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(40):
                store.put("runs", f"{t}-{i}", {"thread": t, "i": i})
                store.query("runs", {"thread": t}, limit=3)
                store.get("runs", f"{t}-{i}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    docs = store.query("runs")
    assert len(docs) == 8 * 40
    for t in range(8):  # each thread's writes come back newest first
        assert [d["i"] for d in docs if d["thread"] == t] == list(range(39, -1, -1))


def test_several_processes_write_to_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    script = textwrap.dedent(
        """
        import sys
        from agentenv_store_local.document import SqliteDocumentStore
        store = SqliteDocumentStore({"path": sys.argv[1]})
        for i in range(30):
            store.put("runs", f"{sys.argv[2]}-{i}", {"proc": sys.argv[2], "i": i})
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), str(p)], stderr=subprocess.PIPE) for p in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    store = make(path)
    docs = store.query("runs")
    assert len(docs) == 4 * 30
    for p in range(4):
        assert [d["i"] for d in docs if d["proc"] == str(p)] == list(range(29, -1, -1))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_store_is_usable_in_a_forked_child(tmp_path: Path) -> None:
    store = make(tmp_path / "r.sqlite3")
    store.put("runs", "parent", {"who": "parent"})
    pid = os.fork()
    if pid == 0:  # child: must open its own connection
        code = 1
        try:
            store.put("runs", "child", {"who": "child"})
            code = 0 if store.get("runs", "parent") == {"who": "parent"} else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert [d["who"] for d in store.query("runs")] == ["child", "parent"]


def test_a_document_holding_a_lone_surrogate_is_stored(tmp_path: Path) -> None:
    """Issue 16: a record echoing a lone surrogate could not be written (UTF-8), so the run's record was lost."""
    from agentenv_store_local.document import SqliteDocumentStore

    store = SqliteDocumentStore({"path": str(tmp_path / "docs.sqlite3")})
    store.put("runs", "r1", {"id": "r1", "error": "bad \ud800 input", "task": "t"})
    assert store.get("runs", "r1") == {"id": "r1", "error": "bad \ud800 input", "task": "t"}
    assert [d["id"] for d in store.query("runs", {"task": "t"})] == ["r1"]
