"""Entry module of `agentenv-store-local`: registers the four local store backends."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_stores() -> list[Any]:
    """The default backends: `sqlite` documents, `filesystem` objects, `env` secrets, `local` images."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("sqlite", "agentenv_store_local.document:SqliteDocumentStore", kind="document"),
        ClassRef("filesystem", "agentenv_store_local.objects:FilesystemObjectStore", kind="object"),
        ClassRef("env", "agentenv_store_local.secret:EnvSecretStore", kind="secret"),
        ClassRef("local", "agentenv_store_local.images:LocalImageStore", kind="image"),
    ]
