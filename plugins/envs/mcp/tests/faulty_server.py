"""A hand-written stdio MCP server (JSON-RPC lines) that misbehaves on demand, for the bad-server tests.

Real third-party servers cover the good path; no real server exits, hangs or lists broken schemas on request, so
this one does: `python faulty_server.py MODE` with MODE one of ok, exit, hang, bad-schema, flood, noise.
In `ok` it keeps a call counter in memory (what a restart resets) and offers a `reset` tool that zeroes it.
"""

from __future__ import annotations

import json
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
COUNTER = {"calls": 0}
SCHEMA = {"type": "object", "properties": {"by": {"type": "integer", "minimum": 1}}, "required": ["by"]}
TOOLS = [
    {"name": "bump", "description": "Add `by` to the counter.", "inputSchema": SCHEMA},
    {"name": "count", "description": "The counter.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "reset", "description": "Zero the counter.", "inputSchema": {"type": "object", "properties": {}}},
]
BAD_TOOLS = [{"name": "broken", "description": "", "inputSchema": {"type": "object", "properties": {"x": {"type": 7}}}}]


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request: dict[str, object], value: object) -> None:
    send({"jsonrpc": "2.0", "id": request["id"], "result": value})


def call(name: str, args: dict[str, int]) -> dict[str, object]:
    if name == "bump":
        COUNTER["calls"] += args["by"]
    elif name == "reset":
        COUNTER["calls"] = 0
    return {"content": [{"type": "text", "text": json.dumps(COUNTER)}], "structuredContent": dict(COUNTER)}


def main() -> None:
    if MODE == "exit":
        print("faulty_server: cannot open the database: permission denied", file=sys.stderr, flush=True)
        sys.exit(3)
    if MODE == "flood":
        line = "x" * 1023 + "\n"
        for _ in range(32 * 1024):  # 32 MiB of stderr before the first answer
            sys.stderr.write(line)
        sys.stderr.write("flood done\n")
        sys.stderr.flush()
    for raw in sys.stdin:
        if MODE == "hang":
            time.sleep(3600)
        if MODE == "noise":
            sys.stdout.write("this is not JSON-RPC\n")
        request = json.loads(raw)
        method = request.get("method")
        if method == "initialize":
            version = request["params"]["protocolVersion"]
            info = {"name": "faulty", "version": "0"}
            result(request, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info})
        elif method == "tools/list":
            result(request, {"tools": BAD_TOOLS if MODE == "bad-schema" else TOOLS})
        elif method == "tools/call":
            params = request["params"]
            result(request, call(params["name"], params.get("arguments") or {}))
        elif "id" in request:
            send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    main()
