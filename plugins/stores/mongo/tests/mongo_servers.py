"""What the MongoDB test servers share: mongoeco's requirement, the test user, and a readiness check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

MONGOECO = "mongoeco[wire]==4.11.0"
"""A MongoDB wire-protocol server in Python (Apache-2.0); it needs Python 3.13."""
SERVER = Path(__file__).with_name("mongoeco_server.py")
MONGOD_VAR = "AGENTENV_MONGOD"
NO_MONGOD = (
    f"no mongod on PATH and {MONGOD_VAR} is not set: Debian ships no MongoDB server (none since its licence change), "
    "and MongoDB's own downloads (which pymongo-inmemory and mongodb-memory-server fetch) are not reachable here"
)
USER, PASSWORD = "agentenv", "conformance-pw"


def pings(url: str) -> Callable[[], bool]:
    """Whether a MongoDB server answers `ping` at `url` (LoopbackService's readiness check)."""

    def check() -> bool:
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        with MongoClient(url, serverSelectionTimeoutMS=1000, connectTimeoutMS=1000) as client:
            try:
                client.admin.command("ping")
            except PyMongoError:
                return False
            return True

    return check


def url_of(port: int, credentials: str = "") -> str:
    return f"mongodb://{credentials}127.0.0.1:{port}/"
