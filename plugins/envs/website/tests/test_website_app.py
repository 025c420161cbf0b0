"""The `app` form with the support desk's real front end: each world (and each fork) has its own mount showing its
own state, forms change the world through its tools as the env's role, and nothing outlives its world."""

from __future__ import annotations

import gc
import http.client
import json
import os
import sys
import threading
import traceback
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from agentenv_helpdesk.env import HelpdeskEnv
from agentenv_runtime import World
from agentenv_website.api import WebsiteEnv, WebsiteError
from agentenv_website.mounts import MOUNTS
from pydantic import ValidationError

WATCHED: list[str] = []
"""What `_Watched` saw of each connection that got no answer."""


class _Watched(http.client.HTTPConnection):
    """A connection that, when its answer does not come, notes whether its descriptor still holds the socket it
    connected (other code in the process closing a number it no longer owns would give it to something else)."""

    def connect(self) -> None:
        super().connect()
        self.held = (descriptor(self.sock.fileno()), self.sock.getsockname()[1])

    def getresponse(self) -> http.client.HTTPResponse:
        try:
            return super().getresponse()
        except TimeoutError:
            fd = self.sock.fileno() if self.sock is not None else -1
            WATCHED.append(
                f"the client's fd {fd} (local port {self.held[1]}) held {self.held[0]} once connected and holds "
                f"{descriptor(fd)} now"
            )
            raise


class _WatchedHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_Watched, req)


def descriptor(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError as exc:
        return f"nothing ({exc.strerror})"


DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}), _WatchedHandler)
APP = "agentenv_helpdesk.web:app"


def desk(**settings: Any) -> World:
    helpdesk = HelpdeskEnv()
    helpdesk.load(HelpdeskEnv.find_artifact("acme"))
    return World([helpdesk, WebsiteEnv({"app": APP, "role": "desk", **settings})], roles={"desk": {"tools": ["*"]}})


def fetch(
    url: str, form: dict[str, str] | None = None, headers: dict[str, str] | None = None, timeout: float = 30
) -> tuple[int, str]:
    data = urlencode(form).encode() if form is not None else None
    try:
        with DIRECT.open(urllib.request.Request(url, data=data, headers=headers or {}), timeout=timeout) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except TimeoutError:
        stacks, sockets, threads = thread_stacks(), listening_sockets(), thread_times()
        again = "answered" if retry_answers(url) else "no answer either"
        pytest.fail(  # no pytest traceback: CI keeps only the start and end of a long log
            f"{url} gave no answer in {timeout} s (a second request a moment later: {again}); "
            f"{WATCHED[-1] if WATCHED else 'the client saw no timeout'}; {sockets}; "
            f"threads by CPU time: {threads}; where every thread not parked in a wait was:\n{stacks}",
            pytrace=False,
        )


def listening_sockets() -> str:
    """Where a request with no answer is: every TCP socket on the site's port (state, queues, inode) and which
    process holds each, this process's open descriptors against its limit, and whether the serving thread lives
    (one CI run saw a request accepted by the kernel that no server thread ever handled)."""
    server, thread = MOUNTS._server, MOUNTS._thread
    if server is None:
        return "the site server is not running"
    port = f"{server.server_address[1]:04X}"
    states = {"01": "ESTABLISHED", "0A": "LISTEN", "06": "TIME_WAIT", "08": "CLOSE_WAIT", "02": "SYN_SENT"}
    rows = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    mine = [row for row in rows if row[1].endswith(f":{port}") or row[2].endswith(f":{port}")]
    holders = socket_holders({row[9] for row in mine} - {"0"})
    sockets = [
        f"{row[1]} -> {row[2]} {states.get(row[3], row[3])} queues {row[4]} inode {row[9]} "
        f"held by {', '.join(holders.get(row[9], [])) or ('nobody: not accepted' if row[9] == '0' else 'no process')}"
        for row in mine
    ]
    try:
        polled = f"inode {os.fstat(server.fileno()).st_ino}"
    except OSError as exc:
        polled = f"none ({exc})"
    descriptors = len(os.listdir("/proc/self/fd"))
    limit = next(line for line in Path("/proc/self/limits").read_text().splitlines() if "open files" in line)
    return (
        f"sockets on port {int(port, 16)}:\n  " + "\n  ".join(sockets) + "\n"
        f"the site server polls fd {server.fileno()}, {polled}; its thread is "
        f"{'alive' if thread is not None and thread.is_alive() else 'dead'}; "
        f"this process has {descriptors} descriptors open ({limit.split()[3]} allowed)"
    )


def socket_holders(inodes: set[str]) -> dict[str, list[str]]:
    """inode -> every "pid N fd M" holding that socket, found through /proc/*/fd."""
    found: dict[str, list[str]] = {}
    for fd_folder in Path("/proc").glob("[0-9]*/fd"):
        try:
            entries = list(fd_folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            try:
                target = os.readlink(entry)
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                found.setdefault(target[8:-1], []).append(f"pid {fd_folder.parent.name} fd {entry.name}")
    return found


def thread_times() -> str:
    """Each thread of this process with its state and CPU seconds, busiest first: a thread that held the GIL
    through the wait (a C call that never releases it) would stand out."""
    names = {str(thread.native_id): thread.name for thread in threading.enumerate()}
    rows = []
    for task in Path("/proc/self/task").iterdir():
        name = names.get(task.name, "(not a Python thread)")
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        rows.append((int(fields[11]) + int(fields[12]), f"{name} [{task.name}] {fields[0]}"))
    ticks = os.sysconf("SC_CLK_TCK")
    return ", ".join(f"{label} {cpu / ticks:.1f} s" for cpu, label in sorted(rows, reverse=True)[:8])


def retry_answers(url: str) -> bool:
    """Whether the same GET answers within 10 s now: a stall that passed, or a server that stays deaf."""
    try:
        with DIRECT.open(url.split("?")[0], timeout=10) as response:
            response.read()
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def thread_stacks() -> str:
    """The stack of every thread, by name, except those parked in a selector or a wait (idle loops, servers and
    child watchers): a site that stops answering is stuck somewhere, and the log CI keeps is short."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    parked = (" in select", " in _do_waitpid", " in wait", " in _wait_for_tstate_lock")
    shown = []
    for ident, frame in sys._current_frames().items():
        lines = traceback.format_stack(frame)
        if ident == threading.get_ident() or lines[-1].splitlines()[0].endswith(parked):
            continue
        shown.append(f"{names.get(ident, ident)}:\n" + "".join(lines[-12:]))
    return "\n".join(shown) or "(every other thread is parked in a wait)"


def site(world: World) -> str:
    return world.env("website").base_url  # type: ignore[attr-defined, no-any-return]


def refunded(world: World) -> int:
    (row,) = world.query(
        "helpdesk", "SELECT COALESCE(SUM(amount_cents), 0) AS c FROM refunds WHERE order_id = 'ORD-5001'"
    )
    return int(row["c"])


def test_the_desk_is_served_for_its_world_and_writes_through_the_tools() -> None:
    world = desk()
    base = site(world)
    assert base.startswith("http://127.0.0.1:") and "/w/" in base
    assert world.call("site_url").result == {"url": base + "/", "form": "app"}
    status, page = fetch(f"{base}/tickets?customer=dana.kim@example.com")
    assert status == 200 and f'href="{base[base.index("/w/") :]}/tickets/TCK-9001"' in page
    status, page = fetch(f"{base}/orders/ORD-5001/refund", {"amount": "89.99", "reason": "Damaged boots"})
    assert status == 200 and "Refunded 89.99" in page  # the redirect was followed to the order page
    assert refunded(world) == 8999
    call = world.trajectory.events[-1]
    assert (call["tool"], call["role"]) == ("get_order", "desk")  # the page after the redirect read the order
    assert [e["tool"] for e in world.trajectory.events if e["role"] == "desk"].count("issue_refund") == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (a process pool's workers are forked)")
def test_a_forked_process_serves_its_own_sites_and_keeps_none_of_the_parents_sockets() -> None:
    parent = desk()
    parent_site, parent_port = site(parent), MOUNTS.port
    assert MOUNTS._server is not None
    listening = f"socket:[{os.fstat(MOUNTS._server.fileno()).st_ino}]"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's clean-up
        try:
            holders = socket_holders({listening[8:-1]}).get(listening[8:-1], [])
            held = any(holder.startswith(f"pid {os.getpid()} ") for holder in holders)
            child = desk()
            status, _ = fetch(f"{site(child)}/tickets?customer=dana.kim@example.com", timeout=10)
            report: dict[str, Any] = {"holds the parent's socket": held, "status": status, "port": MOUNTS.port}
        except BaseException as exc:  # anything goes back to the parent, as text
            report = {"error": repr(exc)}
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer:
        report = json.loads(answer.read() or b"{}")
    os.waitpid(pid, 0)
    assert report.pop("port", None) != parent_port, report
    assert report == {"holds the parent's socket": False, "status": 200}
    assert fetch(f"{parent_site}/tickets?customer=dana.kim@example.com")[0] == 200  # the parent's site goes on


def test_a_fork_has_its_own_site_on_its_own_state() -> None:
    world = desk()
    clone = world.fork()
    assert site(clone) != site(world)
    fetch(f"{site(clone)}/orders/ORD-5001/refund", {"amount": "10", "reason": "Goodwill"})
    assert (refunded(clone), refunded(world)) == (1000, 0)
    assert "10.00 USD" in fetch(f"{site(clone)}/orders/ORD-5001")[1]
    assert "No refunds yet." in fetch(f"{site(world)}/orders/ORD-5001")[1]


def test_a_closed_or_collected_world_has_no_site_left() -> None:
    world = desk()
    base = site(world)
    world.env("website").close()  # type: ignore[attr-defined]
    assert fetch(f"{base}/tickets")[0] == 404
    gone = desk()
    gone_base = site(gone)
    assert fetch(f"{gone_base}/tickets")[0] == 200
    del gone
    gc.collect()
    assert fetch(f"{gone_base}/tickets")[0] == 404


def test_a_cross_site_form_post_is_refused_and_changes_nothing() -> None:
    world = desk()
    status, text = fetch(
        f"{site(world)}/orders/ORD-5001/refund", {"amount": "1", "reason": "x"}, {"Origin": "http://evil.example"}
    )
    assert status == 403 and "Origin" in text
    assert refunded(world) == 0


def test_the_role_must_exist_and_its_rbac_applies() -> None:
    lost = World([HelpdeskEnv(), WebsiteEnv({"app": APP, "role": "clerk"})])
    with pytest.raises(WebsiteError, match=r"env website: settings.role: no role 'clerk' in this world"):
        site(lost)
    status, text = fetch(f"{lost.env('website')._mount}/tickets")  # type: ignore[attr-defined]
    assert status == 500 and "settings.role: no role 'clerk'" in text
    helpdesk = HelpdeskEnv()
    helpdesk.load(HelpdeskEnv.find_artifact("acme"))
    world = World(
        [helpdesk, WebsiteEnv({"app": APP, "role": "clerk"})],
        roles={"clerk": {"tools": ["*"], "deny": ["issue_refund"]}},
    )
    status, page = fetch(f"{site(world)}/orders/ORD-5001/refund", {"amount": "1", "reason": "x"})
    assert status == 422 and "role &#x27;clerk&#x27; may not call &#x27;issue_refund&#x27;" in page
    assert refunded(world) == 0


def test_bad_settings_name_the_field() -> None:
    with pytest.raises(WebsiteError, match=r"settings.app 'no_such_module:app': cannot import it: No module named"):
        WebsiteEnv({"app": "no_such_module:app"})
    with pytest.raises(WebsiteError, match=r"agentenv_helpdesk.web has no callable 'nope'"):
        WebsiteEnv({"app": "agentenv_helpdesk.web:nope"})
    with pytest.raises(
        ValidationError, match=r"give exactly one of `app`, `command`, `image` or `url` \(got app, url\)"
    ):
        WebsiteEnv({"app": APP, "url": "http://127.0.0.1:1"})
    with pytest.raises(ValidationError, match=r"name the WSGI application as module:attribute"):
        WebsiteEnv({"app": "agentenv_helpdesk.web"})
    with pytest.raises(WebsiteError, match=r"compose the env into one"):
        WebsiteEnv({"app": APP}).base_url  # noqa: B018 - reading it raises
