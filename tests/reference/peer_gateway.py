"""A front in the reference gateway's shape over one backing server, built with the reference gateway's own code.

Run in the reference venv of `tests/test_reference_interop.py`:
`python peer_gateway.py GATEWAY_PARENT CHILD_URL PORT`, where GATEWAY_PARENT holds the reference framework's
`agent_env/env/gateway` package copied as `gateway` (the reference runs it as a standalone package too; its
server class needs Postgres, so this front uses the package's card and proxy functions only):

- the card: the gateway's own extensions (`GATEWAY_EXTENSIONS`), no `operations`, and the backing server's card
  fetched and rewritten by the reference's `fetch_child_card` / `rewrite_child_card` as the only child;
- `/agentenv`: the request forwarded to the backing server's data plane as it is (the reference gateway's
  env-level data plane with exactly one backing server);
- everything else (`/mcp`, `/svc/...`): the reference's `forward`, to the backing server.
"""

import sys

sys.path.insert(0, sys.argv[1])

import httpx
import uvicorn
from gateway.constants import GATEWAY_EXTENSIONS, MCP_TRANSPORT, PROTOCOL_VERSION, RPC_PATH
from gateway.rest_proxy import fetch_child_card, forward, rewrite_child_card
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

CHILD = sys.argv[2].rstrip("/")
KEY = "mcp-notes"


async def card(_: Request) -> JSONResponse:
    async with httpx.AsyncClient() as client:
        child = await fetch_child_card(client, KEY, CHILD)
    children = [rewrite_child_card(KEY, child, GATEWAY_EXTENSIONS)] if child is not None else []
    return JSONResponse(
        {
            "name": "env",
            "protocolVersion": PROTOCOL_VERSION,
            "url": RPC_PATH,
            "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": "/mcp", "transport": MCP_TRANSPORT}],
            "capabilities": {"extensions": GATEWAY_EXTENSIONS},
            "children_environments": children,
        }
    )


async def data_plane(request: Request) -> Response:
    async with httpx.AsyncClient() as client:
        answer = await client.post(
            CHILD + RPC_PATH, content=await request.body(), headers={"content-type": "application/json"}, timeout=60
        )
    return Response(answer.content, answer.status_code, media_type=answer.headers.get("content-type"))


async def proxied(request: Request) -> Response:
    return await forward(request, CHILD, role="default", timeout=httpx.Timeout(60), mcp_server=True)


app = Starlette(
    routes=[
        Route("/.well-known/agent-env.json", card),
        Route(RPC_PATH, data_plane, methods=["POST"]),
        Route("/{path:path}", proxied, methods=["GET", "POST", "DELETE"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[-1]), log_level="warning")
