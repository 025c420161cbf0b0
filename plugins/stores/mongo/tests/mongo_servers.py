"""What the MongoDB test servers share: mongoeco's venv, the test user, and a readiness check.

`python mongo_servers.py` makes mongoeco's venv ahead of the tests (`.ci/setup.d/45-mongodb.sh` does) and prints
its interpreter; the tests then reuse it.
"""

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
"""The user of the server that requires one. Its URLs name authMechanism=SCRAM-SHA-256 (what mongod uses for new
users): pymongo's SCRAM-SHA-1 proof, its choice when the server does not list mechanisms, mongoeco refuses."""


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


def mongoeco_problem() -> str | None:
    """Why mongoeco's venv cannot be made here (None: it can)."""
    from agentenv_testing.wheels import find_python, uv_binary

    if uv_binary() is None:
        return "uv is not installed (./dev sync installs it)"
    if find_python("3.13") is None:
        return "mongoeco needs Python 3.13, which is not installed (neither python3.13 on PATH nor a pyenv build)"
    return None


def mongoeco_python() -> Path:
    """The interpreter of a venv holding mongoeco (made once with uv, then reused from its cache folder)."""
    from agentenv_testing.wheels import framework_venv

    return framework_venv("mongoeco", [MONGOECO], python="3.13")


if __name__ == "__main__":
    problem = mongoeco_problem()
    if problem:
        raise SystemExit(problem)
    print(mongoeco_python())
