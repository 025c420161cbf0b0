"""Every config key this install knows: the core tables' keys, and the settings of each installed sandbox
provider, store backend and agent kind (their pydantic fields), with what each does, its type, its default and
the plugin that reads it. `agentenv config explain` answers from here, so a plugin's own field descriptions are
its documentation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentenv.config import DEFAULTS
from agentenv.contracts import Kind, Registries, kinds

RUNTIME = "agentenv-runtime"


@dataclass(frozen=True)
class KeyInfo:
    key: str
    """Dotted, as in the file (`plugins.agentenv-docker.docker.pull`); `<kind>` stands for any agent kind."""
    does: str
    type: str
    default: Any
    reader: str
    """The distribution that reads it."""

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "does": self.does, "type": self.type, "default": self.default, "reader": self.reader}


_CORE: dict[str, tuple[str, str]] = {
    "store.document": ("str", "The document store backend (run and step records), by name."),
    "store.object": ("str", "The object store backend (trajectories, snapshots, artifacts), by name."),
    "store.secret": ("str", "The secret store backend that resolves `secret:KEY` references, by name."),
    "store.image": ("str", "The image store backend (sandbox images by reference), by name."),
    "sandbox.default": ("str", "Where served worlds and sandboxes go when a step names no provider (a chain)."),
    "sandbox.agent_default": ("str", "Where an agent's sandbox goes when deploy_agent names no provider."),
    "run.seed": ("int", "The seed of a run when `agentenv run` is given none."),
    "model.base_url": ("str", "OpenAI-compatible endpoint of the model that llm agents, judges and personas use."),
    "model.model": ("str", "Model name; with it set, a task's default agent kind is `llm`."),
    "model.api_key": ("str (a reference: env:NAME or secret:KEY)", "API key sent to the model endpoint."),
    "model.api": (
        "str",
        "The endpoint's API (openai-chat, openai-responses or anthropic), for kinds that take it (llm, harnesses).",
    ),
    "model.org": ("str", "Organisation header sent to the model endpoint, when it wants one."),
}


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    return text or str(annotation).replace("typing.", "")


def _fields(prefix: str, model: Any, reader: str) -> list[KeyInfo]:
    found = []
    for name, field in getattr(model, "model_fields", {}).items():
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        does, kind = field.description or "", _type_name(field.annotation)
        found.append(KeyInfo(f"{prefix}.{name}", does, kind, default, reader))
    return found


def catalog(host: Registries) -> dict[str, KeyInfo]:
    """Every known key, by dotted name."""
    keys = [
        KeyInfo(key, does, kind, DEFAULTS.get(key.split(".")[0], {}).get(key.split(".")[1]), RUNTIME)
        for key, (kind, does) in _CORE.items()
    ]
    with_settings: tuple[Kind[Any], ...] = (kinds.SANDBOX_PROVIDERS, kinds.STORES)
    for kind in with_settings:
        for name, entry in host.usable(kind).items():
            settings = getattr(entry.obj, "Settings", None)
            table = name.split(":", 1)[0] if kind is kinds.STORES else name  # a store's table is its kind
            keys += _fields(f"plugins.{entry.dist}.{table}", settings, entry.dist)
    for name, entry in host.usable(kinds.AGENT_KINDS).items():
        keys += _fields(f"agents.{name}", getattr(entry.obj, "Settings", None), entry.dist)
    return {info.key: info for info in keys}
