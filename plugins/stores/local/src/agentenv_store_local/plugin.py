"""Entry module of `agentenv-store-local`: registers the four local store backends."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_stores() -> list[type[Any]]:
    """The default backends: `sqlite` documents, `filesystem` objects, `env` secrets, `local` images."""
    from agentenv_store_local.document import SqliteDocumentStore
    from agentenv_store_local.images import LocalImageStore
    from agentenv_store_local.objects import FilesystemObjectStore
    from agentenv_store_local.secret import EnvSecretStore

    return [SqliteDocumentStore, FilesystemObjectStore, EnvSecretStore, LocalImageStore]
