"""Entry module of `agentenv-store-mongo`: registers the `mongodb` document store (pymongo is imported only when
the store is built, never by `agentenv --help`)."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_stores() -> list[Any]:
    """The `mongodb` document store."""
    from agentenv.contracts import ClassRef

    return [ClassRef("mongodb", "agentenv_store_mongo.document:MongoDocumentStore", kind="document")]
