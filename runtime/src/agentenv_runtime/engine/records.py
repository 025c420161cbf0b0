"""Run records: the document store keeps one record per run, the object store keeps blobs beside it."""

from __future__ import annotations

from typing import Any

from agentenv.config import Config, ConfigError, is_secret, resolve
from agentenv.contracts import DocumentStore, ObjectStore, kinds
from agentenv.plugins.host import PluginHost
from pydantic import ValidationError

RUNS = "runs"


def open_store(kind: str, config: Config, host: PluginHost) -> Any:
    """The backend `[store] <kind>` names, built with its settings from `[plugins.<dist>.<kind>]`."""
    name = config.get(f"store.{kind}")
    key = f"{kind}:{name}"
    stores = host.registry(kinds.STORES)
    if key not in stores:
        have = sorted(k.partition(":")[2] for k in stores if k.startswith(f"{kind}:"))
        fix = (
            f"add the plugin that provides it, or set [store] {kind} to one installed ({', '.join(have)})"
            if have
            else "add a store plugin: agentenv plugin add agentenv-store-local"
        )
        raise LookupError(f"[store] {kind} = {name!r} but no such {kind} store is installed; fix: {fix}")
    entry = stores[key]
    settings = config.plugin_settings(entry.dist).get(kind, {})
    # Credentials and endpoints may be `env:`/`secret:` references; a secret store resolves only `env:` ones.
    secrets = None if kind == "secret" else _secret_lookup(config, host)
    field = f"plugins.{entry.dist}.{kind}"
    try:
        return entry.obj(_resolved(settings, field, config, secrets) if isinstance(settings, dict) else settings)
    except ValidationError as exc:
        wrong = "; ".join(f"`{'.'.join(map(str, e['loc']))}`: {e['msg']}" for e in exc.errors())
        raise ConfigError(
            f"{config.file or 'config'}: [{field}] {wrong} (fix these settings of the {name!r} {kind} store; "
            f"see the {entry.dist} README)"
        ) from None


def _secret_lookup(config: Config, host: PluginHost) -> Any:
    """`secret:` lookups through the configured secret store, opened on first use only."""
    opened: list[Any] = []

    def lookup(key: str) -> str | None:
        if not opened:
            opened.append(open_store("secret", config, host))
        found: str | None = opened[0].get(key)
        return found

    return lookup


def _resolved(settings: dict[str, Any], field: str, config: Config, secrets: Any) -> dict[str, Any]:
    """Settings with references resolved; a credential written as a literal is refused (it belongs in the
    environment or the secret store, never in a config file that gets shared)."""
    out: dict[str, Any] = {}
    for name, value in settings.items():
        dotted = f"{field}.{name}"
        if isinstance(value, dict):
            out[name] = _resolved(value, dotted, config, secrets)
            continue
        if isinstance(value, str) and value and is_secret(dotted, value) and not value.startswith(("env:", "secret:")):
            raise ConfigError(
                f"{config.file or 'config'}: {dotted} is a literal credential; write it as env:NAME or secret:KEY"
            )
        out[name] = resolve(value, field=dotted, file=config.file, secrets=secrets)
    return out


class Records:
    def __init__(self, config: Config, host: PluginHost) -> None:
        self.documents: DocumentStore = open_store("document", config, host)
        self.objects: ObjectStore = open_store("object", config, host)

    def save(self, record: dict[str, Any]) -> None:
        self.documents.put(RUNS, record["id"], record)

    def get(self, run_id: str) -> dict[str, Any]:
        record = self.documents.get(RUNS, run_id)
        if record is None:
            matches = [r for r in self.documents.query(RUNS, limit=5000) if r["id"].startswith(run_id)]
            if len(matches) != 1:
                raise LookupError(f"no run {run_id!r}" if not matches else f"run id {run_id!r} is ambiguous")
            record = matches[0]
        return record

    def list(self, limit: int = 20, **where: Any) -> list[dict[str, Any]]:
        return self.documents.query(RUNS, where or None, limit=limit)
