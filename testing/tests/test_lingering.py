"""A thread left in accept() on a socket closed without a shutdown: the harm it does, and the check that reports it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_testing.lingering import accepting_closed_sockets, lingering_accepts
from agentenv_testing.pytest_plugin import LINGERING_VAR


def accept_once(server: socket.socket, got: list[object]) -> threading.Thread:
    def run() -> None:
        try:
            connection, _ = server.accept()
            got.append(connection.getsockname()[1])
            connection.close()
        except OSError as exc:
            got.append(exc)

    thread = threading.Thread(target=run, name="accepts-once", daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not accepting(thread) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # from the Python frame into the system call itself
    return thread


def accepting(thread: threading.Thread) -> bool:
    frame = sys._current_frames().get(thread.ident or 0)
    return frame is not None and frame.f_code is socket.socket.accept.__code__


@pytest.fixture
def restarting_sigusr1() -> Iterator[None]:
    """SIGUSR1 with a handler that restarts interrupted calls (SA_RESTART, as asyncio's add_signal_handler sets)."""
    before = signal.signal(signal.SIGUSR1, lambda *_: None)
    signal.siginterrupt(signal.SIGUSR1, False)
    yield
    signal.signal(signal.SIGUSR1, before)


@pytest.mark.skipif(sys.platform != "linux", reason="shows Linux's restart of an interrupted accept()")
def test_a_restarted_accept_takes_the_connection_of_whatever_socket_reuses_the_number(
    restarting_sigusr1: None,
) -> None:
    old = socket.create_server(("127.0.0.1", 0))
    number, got = old.fileno(), []
    thread = accept_once(old, got)
    old.close()  # no shutdown: the thread waits on in accept()
    new = socket.create_server(("127.0.0.1", 0))
    try:
        assert new.fileno() == number  # the lowest free number: the one just closed
        signal.pthread_kill(thread.ident or 0, signal.SIGUSR1)
        time.sleep(0.2)
        socket.create_connection(new.getsockname(), timeout=5).close()
        thread.join(5)
        assert got == [new.getsockname()[1]]  # the old thread took the new server's connection
    finally:
        new.close()


def test_a_thread_in_accept_on_a_socket_closed_without_shutdown_is_reported() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port, got = server.getsockname()[1], []
    thread = accept_once(server, got)
    assert thread.ident not in accepting_closed_sockets()  # open: nothing wrong
    server.close()
    try:
        found = lingering_accepts(patience=0.2)
        assert thread.ident in found
        assert "'accepts-once', in accept() called at " + __file__ in found[thread.ident]
    finally:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # the old socket still listens: release it
        thread.join(5)
    assert got and not isinstance(got[0], OSError)


def test_a_shutdown_before_the_close_wakes_the_thread_and_nothing_is_reported() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    got: list[object] = []
    thread = accept_once(server, got)
    server.shutdown(socket.SHUT_RDWR)
    server.close()
    assert thread.ident not in lingering_accepts()
    thread.join(5)
    assert isinstance(got[0], OSError)


def test_the_pytest_plugin_fails_the_teardown_of_the_test_that_left_one(tmp_path: Path) -> None:
    (tmp_path / "test_leaves.py").write_text(
        textwrap.dedent(
            """
            import socket, threading

            def test_leaves_a_thread():
                server = socket.create_server(("127.0.0.1", 0))
                threading.Thread(target=server.accept, daemon=True).start()
                __import__("time").sleep(0.2)
                server.close()

            def test_after_it():
                pass
            """
        )
    )
    done = pytest_on(tmp_path / "test_leaves.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed, 1 error" in done.stdout  # reported once, at the teardown of the test that left it
    assert "ERROR test_leaves.py::test_leaves_a_thread" in done.stdout
    assert "on a socket closed without a shutdown: call `sock.shutdown(socket.SHUT_RDWR)`" in done.stdout
    allowed = pytest_on(tmp_path / "test_leaves.py", allow_lingering="1")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr


def pytest_on(test_file: Path, allow_lingering: str | None = None) -> subprocess.CompletedProcess[str]:
    """pytest run on `test_file` in a process of its own, with the plugin's check on unless `allow_lingering`."""
    env = {key: value for key, value in os.environ.items() if key != LINGERING_VAR}
    if allow_lingering is not None:
        env[LINGERING_VAR] = allow_lingering
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=test_file.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
