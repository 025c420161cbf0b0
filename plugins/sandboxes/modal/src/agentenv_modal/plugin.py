"""Entry module of `agentenv-modal`: registers the Modal sandbox providers (the SDK is imported lazily)."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_sandbox_providers() -> list[Any]:
    """`modal` (containers) and `modal-vm` sandboxes on Modal."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("modal", "agentenv_modal.provider:ModalProvider"),
        ClassRef("modal-vm", "agentenv_modal.provider:ModalVmProvider"),
    ]
