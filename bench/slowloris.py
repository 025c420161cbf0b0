"""Slow clients against served worlds: `/health` latency while 300 slowloris sockets are open at a 256-fd limit.

Run: .venv/bin/python bench/slowloris.py [--targets gateway,openenv,a2a] [--sockets 300] [--fd-limit 256]
                                          [--seconds 12]

Each server runs in its own process with its descriptor limit lowered to `--fd-limit` (`agentenv serve`,
`agentenv openenv serve`, `agentenv a2a-serve`). A second process opens `--sockets` connections that each send
half a request head (`GET /health HTTP/1.1`, `Host`) and then one more header line every second, never the blank
line that ends the head; a connection the server closes is opened again at once, so the attack keeps its
count. Meanwhile a probe asks for the server's health path (the card for A2A) every 50 ms, each time on a new
connection (what a new client sees; a kept-alive connection would go around `accept()`), with a 5 s timeout.

Printed per target: the probe's p50/p99 idle and under attack (measured in the same run, one after the other),
their ratio, the requests that failed or timed out, how many attack connections the server closed, and the
lines the server logged during the attack. For the gateway, the same attack also runs against the same server
with the bounds lifted (`header_timeout = 3600`, `max_waiting_headers = 1000000`): that is the behaviour before
`agentenv_runtime.slow_clients`.

Targets (the issue's): under attack p99 ≤ 100 ms and the log under 100 lines.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTENV = str(Path(sys.executable).with_name("agentenv"))
P99_TARGET_MS = 100.0
LOG_TARGET_LINES = 100
PROBE_TIMEOUT = 5.0
HEALTH = {"gateway": "/health", "openenv": "/health", "a2a": "/.well-known/agent-card.json"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(target: str, port: int) -> list[str]:
    if target == "gateway":
        return [AGENTENV, "serve", "helpdesk", "-a", "acme", "--port", str(port)]
    if target == "openenv":
        return [AGENTENV, "openenv", "serve", "support-refund", "--port", str(port)]
    return [
        AGENTENV,
        "a2a-serve",
        "--env",
        "helpdesk",
        "-a",
        "acme",
        "--agent-kind",
        "scripted",
        "--agent-settings",
        '{"policy_data": {"turn": []}}',
        "--port",
        str(port),
    ]


def start_server(target: str, fd_limit: int, env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()

    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    with log.open("wb") as sink:
        process = subprocess.Popen(
            server_command(target, port), stdout=sink, stderr=subprocess.STDOUT, env=env, preexec_fn=lower_limit
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{target} server exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        if probe(port, HEALTH[target], timeout=1.0) is not None:
            return process, port
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{target} server did not answer {HEALTH[target]} within 60 s")


def probe(port: int, path: str, timeout: float = PROBE_TIMEOUT) -> float | None:
    """Milliseconds for one GET on a new connection, or None if it failed or timed out."""
    start = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
    except OSError:
        return None
    if not reply.startswith(b"HTTP/1.1 200"):
        return None
    return (time.perf_counter() - start) * 1000


def probe_for(port: int, path: str, seconds: float) -> tuple[list[float], int]:
    """Probe every 50 ms for `seconds`: (latencies of the answered probes, failed probes)."""
    latencies, failed = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        took = probe(port, path)
        if took is None:
            failed += 1
            latencies.append(PROBE_TIMEOUT * 1000)
        else:
            latencies.append(took)
        time.sleep(0.05)
    return latencies, failed


def attack(port: int, sockets: int, stop: multiprocessing.synchronize.Event, reopened: multiprocessing.Value) -> None:  # type: ignore[name-defined]
    """Hold `sockets` half-sent request heads open, one more header line each second, reopening closed ones."""
    import selectors

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, sockets + 64)), hard))
    selector = selectors.DefaultSelector()

    def open_one() -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        except OSError:
            time.sleep(0.01)

    for _ in range(sockets):
        open_one()
    last_drip = time.monotonic()
    while not stop.is_set():
        for key, _ in selector.select(timeout=0.1):
            sock = key.fileobj
            try:
                data = sock.recv(4096)  # type: ignore[union-attr]
            except OSError:
                data = b""
            if not data:
                selector.unregister(sock)
                sock.close()  # type: ignore[union-attr]
                with reopened.get_lock():
                    reopened.value += 1
        while len(selector.get_map()) < sockets and not stop.is_set():
            open_one()
        if time.monotonic() - last_drip >= 1.0:
            last_drip = time.monotonic()
            for key in list(selector.get_map().values()):
                with contextlib.suppress(OSError):
                    key.fileobj.send(b"X-Slow: 1\r\n")  # type: ignore[union-attr]
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(target: str, args: argparse.Namespace, config: str | None) -> dict[str, float]:
    env = dict(os.environ)
    if config is not None:
        env["AGENTENV_CONFIG"] = config
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        env.setdefault("AGENTENV_HOME", tmp)
        process, port = start_server(target, args.fd_limit, env, log)
        try:
            path = HEALTH[target]
            idle, _ = probe_for(port, path, min(args.seconds, 4))
            lines_before = len(log.read_text(errors="replace").splitlines())
            stop, reopened = multiprocessing.Event(), multiprocessing.Value("i", 0)
            attacker = multiprocessing.Process(target=attack, args=(port, args.sockets, stop, reopened))
            attacker.start()
            time.sleep(2)  # the sockets are open and have sent their first half-head
            loaded, failed = probe_for(port, path, args.seconds)
            stop.set()
            attacker.join(10)
            logged = log.read_text(errors="replace").splitlines()[lines_before:]
            lines = len(logged)
            if args.show_log and logged:
                print("\n".join(["  | " + line for line in logged[:40]]), flush=True)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return {
        "idle_p50": statistics.median(idle),
        "idle_p99": percentile(idle, 0.99),
        "p50": statistics.median(loaded),
        "p99": percentile(loaded, 0.99),
        "failed": failed,
        "probes": len(loaded),
        "closed": reopened.value,
        "log_lines": lines,
    }


def report(name: str, row: dict[str, float], judged: bool) -> bool:
    ratio = row["p99"] / row["idle_p99"] if row["idle_p99"] else float("inf")
    ok = row["p99"] <= P99_TARGET_MS and row["log_lines"] < LOG_TARGET_LINES and not row["failed"]
    verdict = ("met" if ok else "NOT met") if judged else "reference"
    print(
        f"{name:<22} idle p50 {row['idle_p50']:6.1f} p99 {row['idle_p99']:6.1f} ms | attacked p50 {row['p50']:7.1f} "
        f"p99 {row['p99']:7.1f} ms ({ratio:5.1f}x idle) | failed {row['failed']:3d}/{row['probes']} | "
        f"attack sockets closed {row['closed']:6d} | log lines {row['log_lines']:5d} | {verdict}",
        flush=True,
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="gateway,openenv,a2a")
    parser.add_argument("--sockets", type=int, default=300)
    parser.add_argument("--fd-limit", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--show-log", action="store_true", help="Print the first 40 lines each server logged.")
    parser.add_argument("--no-before", action="store_true", help="Skip the gateway with its bounds lifted.")
    args = parser.parse_args()
    print(
        f"{args.sockets} slowloris sockets against servers limited to {args.fd_limit} descriptors, "
        f"{args.seconds:g} s each; targets: p99 <= {P99_TARGET_MS:g} ms, log < {LOG_TARGET_LINES} lines",
        flush=True,
    )
    all_met = True
    for target in [name.strip() for name in args.targets.split(",") if name.strip()]:
        if target not in HEALTH:
            raise SystemExit(f"unknown target {target!r} (gateway, openenv, a2a)")
        all_met &= report(target, measure(target, args, None), judged=True)
        if target == "gateway" and not args.no_before:
            with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as lifted:
                lifted.write(
                    "[plugins.agentenv-gateway.limits]\nheader_timeout = 3600\nmax_waiting_headers = 1000000\n"
                )
            try:
                report("gateway, bounds lifted", measure(target, args, lifted.name), judged=False)
            finally:
                os.unlink(lifted.name)
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
