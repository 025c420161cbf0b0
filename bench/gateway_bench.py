"""Gateway benchmark: MCP tools/call through the gateway versus a plain official-SDK MCP server.

Run: .venv/bin/python bench/gateway_bench.py [--calls N] [--rounds R] [--concurrency C] [--transport T]

Both servers run in their own subprocess on loopback and expose `get_ticket` of a helpdesk world loaded
with the `acme` artifact:
  gateway    `agentenv_gateway.app.build_app(world)` (low-level SDK server, world rules on every call)
  baseline   `mcp.server.mcpserver.MCPServer` with one `get_ticket` tool that calls the env method directly
The same client (official SDK `ClientSession` over `streamable_http_client`) measures both, in alternating
rounds so machine noise hits both alike, and both servers use the same response mode: `sse` (the SDK's
default) and `json` (the gateway's default: one JSON body per POST), each compared like for like.
Reported per mode: per-call round trip (median and p90 over all calls), sequential throughput, throughput
with C concurrent sessions, the gateway/baseline ratios (target ≤ 1.2×), and REST call latency through the
gateway (`POST /rest/tools/get_ticket`, httpx). Compare ratios, not
absolute times: they depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

TICKET = {"ticket_id": "TCK-9001"}
TARGET_RATIO = 1.2


# ---- servers (each in its own process) ---------------------------------------------------------------
def serve(kind: str, json_response: bool) -> None:
    """Child process: serve one server, print its URL, run until stdin closes."""
    from agentenv_gateway.server import serve_in_thread
    from agentenv_runtime.world.build import build_world

    world = build_world("helpdesk", artifacts=["acme"])
    if kind == "gateway":
        from agentenv_gateway.app import build_app

        app: Any = build_app(world, json_response=json_response)
    else:
        from mcp.server.mcpserver import MCPServer

        env: Any = world.env("helpdesk")
        server = MCPServer("baseline", log_level="WARNING")

        @server.tool()
        def get_ticket(ticket_id: str) -> dict[str, Any]:
            """One ticket with its comments."""
            return env.get_ticket(ticket_id)  # type: ignore[no-any-return]

        app = server.streamable_http_app(json_response=json_response)
    with serve_in_thread(app) as url:
        print(url, flush=True)
        sys.stdin.read()


@contextmanager
def child(kind: str, json_response: bool) -> Iterator[str]:
    argv = [sys.executable, __file__, "--serve", kind] + (["--json-response"] if json_response else [])
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit(f"{kind} server did not start")
        yield url
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(20)


# ---- client ------------------------------------------------------------------------------------------
async def _session_calls(url: str, calls: int, timings: list[float] | None, ready: Any = None, go: Any = None) -> None:
    """One client session: set up and warm up, then (after `go` when given) make `calls` calls."""
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient() as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        for _ in range(20):  # warm-up
            await session.call_tool("get_ticket", TICKET)
        if ready is not None:
            ready.release()
            await go.wait()
        for _ in range(calls):
            start = time.perf_counter()
            result = await session.call_tool("get_ticket", TICKET)
            if timings is not None:
                timings.append(time.perf_counter() - start)
            if result.is_error:
                raise SystemExit(f"get_ticket failed on {url}: {result.content}")


def sequential(url: str, calls: int) -> list[float]:
    timings: list[float] = []
    asyncio.run(_session_calls(url, calls, timings))
    return timings


def concurrent(url: str, calls: int, sessions: int) -> float:
    """Calls per second with `sessions` concurrent client sessions."""

    async def main() -> float:
        ready, go = asyncio.Semaphore(0), asyncio.Event()
        tasks = [asyncio.create_task(_session_calls(url, calls // sessions, None, ready, go)) for _ in range(sessions)]
        for _ in range(sessions):  # every session connected and warm before the clock starts
            await ready.acquire()
        start = time.perf_counter()
        go.set()
        await asyncio.gather(*tasks)
        return (calls // sessions * sessions) / (time.perf_counter() - start)

    return asyncio.run(main())


def rest_latency(url: str, calls: int) -> list[float]:
    import httpx

    timings = []
    with httpx.Client(base_url=url) as client:
        for _ in range(20):
            client.post("/rest/tools/get_ticket", json=TICKET)
        for _ in range(calls):
            start = time.perf_counter()
            response = client.post("/rest/tools/get_ticket", json=TICKET)
            timings.append(time.perf_counter() - start)
            if response.status_code != 200:
                raise SystemExit(f"REST get_ticket failed: {response.status_code} {response.text}")
    return timings


def summary(timings: list[float]) -> dict[str, float]:
    ordered = sorted(timings)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p90_ms": ordered[int(len(ordered) * 0.9)] * 1000,
        "calls_per_s": len(ordered) / sum(ordered),
    }


def compare(args: argparse.Namespace, json_response: bool) -> dict[str, Any]:
    timings: dict[str, list[float]] = {"gateway": [], "baseline": []}
    throughput: dict[str, list[float]] = {"gateway": [], "baseline": []}
    with child("gateway", json_response) as gateway_url, child("baseline", json_response) as baseline_url:
        urls = {"gateway": gateway_url, "baseline": baseline_url}
        for _ in range(args.rounds):
            for kind, url in urls.items():
                timings[kind] += sequential(url, args.calls)
                throughput[kind].append(concurrent(url, args.calls, args.concurrency))
        rest = summary(rest_latency(gateway_url, args.calls * 2))
    key = f"concurrent{args.concurrency}_calls_per_s"
    report: dict[str, Any] = {"transport": "json" if json_response else "sse"}
    for kind in ("gateway", "baseline"):
        report[kind] = summary(timings[kind]) | {key: statistics.median(throughput[kind])}
    report["ratio_median_latency"] = report["gateway"]["median_ms"] / report["baseline"]["median_ms"]
    report["ratio_throughput"] = report["baseline"][key] / report["gateway"][key]
    report["rest"] = rest
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=["gateway", "baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--json-response", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=300, help="calls per round (default 300)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per server (default 3)")
    parser.add_argument("--concurrency", type=int, default=8, help="sessions for the throughput test (default 8)")
    parser.add_argument("--transport", choices=["sse", "json", "both"], default="both", help="response mode(s)")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.json_response)
        return
    modes = {"sse": [False], "json": [True], "both": [False, True]}[args.transport]
    reports = [compare(args, json_response) for json_response in modes]
    print(json.dumps(reports, indent=2))
    for report in reports:
        ratio = report["ratio_median_latency"]
        verdict = "ok" if ratio <= TARGET_RATIO else "over target"
        print(
            f"[{report['transport']}] MCP tools/call median: gateway {report['gateway']['median_ms']:.2f} ms, "
            f"baseline {report['baseline']['median_ms']:.2f} ms → ratio {ratio:.2f}× (target ≤ {TARGET_RATIO}×, "
            f"{verdict}); throughput ratio {report['ratio_throughput']:.2f}×; "
            f"REST median {report['rest']['median_ms']:.2f} ms"
        )


if __name__ == "__main__":
    main()
