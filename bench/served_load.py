"""Served-world load: throughput at 32 and 128 concurrent MCP sessions versus a plain official-SDK MCP server,
and `/health` latency while a maximal allowed JSON-RPC batch runs.

Run: .venv/bin/python bench/served_load.py [--calls N] [--rounds R] [--sessions 32,128]

Servers are those of `bench/gateway_bench.py` (each in its own process, `get_ticket` of a helpdesk world with
`acme`, JSON response mode; alternating rounds). Reported:

- throughput (calls/s) at each session count, gateway and baseline, and the gateway/baseline ratio
  (target ≥ 1.0×: the gateway's bounds, rules and world thread must not cost throughput), measured twice: with
  the official SDK client, and with a lean wire client (`WireSession`: MCP's streamable-HTTP JSON-RPC over one
  keep-alive HTTP/1.1 connection per session). The SDK client spends about 1.5× a server's CPU per call, so on
  a 2-core machine it saturates first and that ratio mostly measures the client; the wire client leaves the
  servers as the bottleneck, which is what the target is about;
- `/health` p50/p99 while another client sends, back to back, batches of `max_batch_control` `tools/call`s
  (the largest batch the limits allow), against `/health` p99 on the same server idle, measured in the same
  run (target: p99 under load within 100 ms).

Compare ratios, not absolute times: they depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from gateway_bench import TICKET, _session_calls, child

TARGET_THROUGHPUT = 1.0
HEALTH_TARGET_MS = 100.0


def concurrent(url: str, calls: int, sessions: int) -> float:
    """Calls per second with `sessions` concurrent MCP sessions, every session connected and warm before the
    clock starts. A session that fails stops the measurement with its error (instead of leaving the others
    waiting for it forever)."""

    async def one(ready: asyncio.Semaphore, go: asyncio.Event, released: list[bool]) -> None:
        try:
            await _session_calls(url, calls // sessions, None, ready, go)
        finally:
            if not released[0]:  # failed before it said it was ready: let the start go on, then fail below
                released[0] = True
                ready.release()

    async def main() -> float:
        ready, go = asyncio.Semaphore(0), asyncio.Event()
        tasks = [asyncio.create_task(one(ready, go, [False])) for _ in range(sessions)]
        for _ in range(sessions):
            await ready.acquire()
        start = time.perf_counter()
        go.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            raise SystemExit(f"{len(failed)} of {sessions} sessions failed on {url}: {failed[0]!r}")
        return (calls // sessions * sessions) / (time.perf_counter() - start)

    return asyncio.run(main())


PROTOCOL_VERSION = "2025-11-25"
"""What the official client negotiates with both servers (seen on the wire)."""


class WireSession:
    """One MCP session spoken directly: initialize, the initialized notification, then `tools/call` POSTs with
    the session id, each answered with one JSON body (both servers run in JSON response mode). Raw HTTP/1.1 on
    asyncio streams, one request in flight: as little client work per call as a Python client can do."""

    def __init__(self, url: str) -> None:
        host_port = url.split("://", 1)[1].split("/", 1)[0]
        self.host, _, port = host_port.partition(":")
        self.port = int(port)
        self.session_id = ""
        self.reader: Any = None
        self.writer: Any = None
        self.next_id = 0

    async def post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps(message, separators=(",", ":")).encode()
        headers = (
            f"POST /mcp HTTP/1.1\r\nhost: {self.host}:{self.port}\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\ncontent-length: {len(body)}\r\n"
        )
        if self.session_id:
            headers += f"mcp-session-id: {self.session_id}\r\nmcp-protocol-version: {PROTOCOL_VERSION}\r\n"
        self.writer.write(headers.encode() + b"\r\n" + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if "content-length" not in fields:
            raise RuntimeError(f"POST /mcp answered {status} without a content-length (not JSON response mode)")
        return status, fields, await self.reader.readexactly(int(fields["content-length"]))

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        init = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}}
        status, fields, _ = await self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        self.session_id = fields.get("mcp-session-id", "")
        if status != 200 or not self.session_id:
            raise RuntimeError(f"initialize answered {status} without a session id")
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, name: str, arguments: dict[str, Any]) -> None:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call"}
        status, _, body = await self.post({**message, "params": {"name": name, "arguments": arguments}})
        reply = json.loads(body)
        if status != 200 or "result" not in reply or reply["result"].get("isError"):
            raise RuntimeError(f"tools/call answered {status}: {body[:300]!r}")

    def close(self) -> None:
        self.writer.close()


def wire_concurrent(url: str, calls: int, sessions: int) -> float:
    """Calls per second with `sessions` concurrent wire sessions, all open and warm before the clock starts."""

    async def main() -> float:
        clients = [WireSession(url) for _ in range(sessions)]
        await asyncio.gather(*(client.open() for client in clients))
        await asyncio.gather(*(client.call("get_ticket", TICKET) for client in clients))  # warm-up
        each = calls // sessions

        async def run(client: WireSession) -> None:
            for _ in range(each):
                await client.call("get_ticket", TICKET)

        start = time.perf_counter()
        try:
            await asyncio.gather(*(run(client) for client in clients))
        finally:
            for client in clients:
                client.close()
        return each * sessions / (time.perf_counter() - start)

    return asyncio.run(main())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def health_latencies(url: str, samples: int) -> list[float]:
    import httpx

    timings = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(samples):
            start = time.perf_counter()
            client.get("/health").raise_for_status()
            timings.append((time.perf_counter() - start) * 1000)
            time.sleep(0.005)
    return timings


def health_under_batches(url: str, samples: int) -> dict[str, Any]:
    """`/health` latency idle, then while maximal batches run back to back on another connection."""
    import httpx
    from agentenv_gateway.limits import GatewayLimits

    size = GatewayLimits().max_batch_control  # a token-less world: every caller may send control-size batches
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "get_ticket", "arguments": TICKET}}
        for i in range(size)
    ]
    body = json.dumps(batch).encode()
    idle = health_latencies(url, samples)
    stop = threading.Event()
    sent = [0]
    batch_seconds: list[float] = []

    def flood() -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            while not stop.is_set():
                start = time.perf_counter()
                replies = client.post("/agentenv", content=body, headers={"content-type": "application/json"}).json()
                batch_seconds.append(time.perf_counter() - start)
                assert isinstance(replies, list) and len(replies) == size, str(replies)[:300]
                sent[0] += 1

    threads = [threading.Thread(target=flood) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    loaded = health_latencies(url, samples)
    stop.set()
    for thread in threads:
        thread.join()
    return {
        "batch_size": size,
        "batches_sent": sent[0],
        "batch_seconds_median": statistics.median(batch_seconds) if batch_seconds else None,
        "idle_p50_ms": percentile(idle, 0.5),
        "idle_p99_ms": percentile(idle, 0.99),
        "loaded_p50_ms": percentile(loaded, 0.5),
        "loaded_p99_ms": percentile(loaded, 0.99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2560, help="calls per round and session count (default 2560)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per server (default 3)")
    parser.add_argument("--sessions", default="32,128", help="concurrent session counts (default 32,128)")
    parser.add_argument("--health-samples", type=int, default=300, help="/health requests per phase (default 300)")
    args = parser.parse_args()
    counts = [int(n) for n in args.sessions.split(",")]
    report: dict[str, Any] = {"throughput": {}}
    clients = {"wire client": wire_concurrent, "SDK client": concurrent}
    with child("gateway", True) as gateway_url, child("baseline", True) as baseline_url:
        for client, measure in clients.items():
            for sessions in counts:
                rates: dict[str, list[float]] = {"gateway": [], "baseline": []}
                for _ in range(args.rounds):
                    for kind, url in (("gateway", gateway_url), ("baseline", baseline_url)):
                        rates[kind].append(measure(url, args.calls, sessions))
                gateway, baseline = statistics.median(rates["gateway"]), statistics.median(rates["baseline"])
                report["throughput"][f"{sessions} sessions, {client}"] = {
                    "gateway_calls_per_s": gateway,
                    "baseline_calls_per_s": baseline,
                    "ratio": gateway / baseline,
                }
        report["health"] = health_under_batches(gateway_url, args.health_samples)
    print(json.dumps(report, indent=2))
    for label, row in report["throughput"].items():
        verdict = "ok" if row["ratio"] >= TARGET_THROUGHPUT else "under target"
        target = f"target ≥ {TARGET_THROUGHPUT}×, {verdict}" if "wire" in label else "client-bound, for reference"
        print(
            f"{label}: gateway {row['gateway_calls_per_s']:.0f} calls/s, baseline "
            f"{row['baseline_calls_per_s']:.0f} calls/s → ratio {row['ratio']:.2f}× ({target})"
        )
    health = report["health"]
    verdict = "ok" if health["loaded_p99_ms"] <= HEALTH_TARGET_MS else "over target"
    print(
        f"/health p99 while {health['batch_size']}-call batches run: {health['loaded_p99_ms']:.1f} ms "
        f"(idle p99 {health['idle_p99_ms']:.1f} ms, ratio {health['loaded_p99_ms'] / health['idle_p99_ms']:.1f}×; "
        f"target ≤ {HEALTH_TARGET_MS:.0f} ms, {verdict}; {health['batches_sent']} batches sent)"
    )


if __name__ == "__main__":
    main()
