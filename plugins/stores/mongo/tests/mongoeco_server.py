"""mongoeco's MongoDB wire-protocol server on 127.0.0.1:PORT, in memory, until it is stopped (SIGTERM).

Run by the tests with the interpreter of a venv holding `mongoeco[wire]` (Python 3.13), never the workspace's:

    python mongoeco_server.py PORT [USER PASSWORD]

With a user, the server requires SCRAM authentication (as `mongod --auth` does) and knows only that user.
"""

from __future__ import annotations

import asyncio
import signal
import sys


async def serve(port: int, credentials: tuple[str, ...]) -> None:
    from mongoeco.wire import AsyncMongoEcoProxyServer, WireAuthUser

    root = ({"role": "root", "db": "admin"},)
    users = (WireAuthUser(credentials[0], credentials[1], roles=root),) if credentials else ()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with AsyncMongoEcoProxyServer(port=port, auth_users=users) as server:
        print(f"mongoeco serving on {server.address.host}:{server.address.port}", flush=True)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), tuple(sys.argv[2:4])))
