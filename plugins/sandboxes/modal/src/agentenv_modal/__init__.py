"""agentenv sandbox providers on Modal: `modal` (containers) and `modal-vm`. Imports no Modal SDK here."""

__version__ = "0.1.0"
