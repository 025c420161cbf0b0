"""Configuration: one `.agentenv/config.toml`, found by walking up from the working directory.

`AGENTENV_CONFIG` names a file explicitly. No file means local defaults. Values may be references that
are resolved only when read: `env:NAME`, `env:NAME?default`, `secret:KEY`. Plugins own
`[plugins.<distribution>]` tables. Every value remembers where it came from for `agentenv config show`.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pathlib is imported where a path is made: `agentenv --help` loads this module, not pathlib
    from pathlib import Path

CONFIG_VAR = "AGENTENV_CONFIG"
CONFIG_RELPATH = os.path.join(".agentenv", "config.toml")
KNOWN_TABLES = ("plugins", "sandbox", "store", "model", "run", "world", "agents")
DEFAULTS: dict[str, dict[str, Any]] = {
    "store": {"document": "sqlite", "object": "filesystem", "secret": "env", "image": "local"},
    "sandbox": {"default": "inline", "agent_default": "inline"},
    "run": {"seed": 0},
}
NAMING_TABLES = ("store.", "sandbox.", "run.")
_SECRET_KEY = re.compile(r"(key|token|secret|password|credential)", re.IGNORECASE)
_ENV_REF = re.compile(r"^env:([A-Za-z_][A-Za-z0-9_]*)(?:\?(.*))?$")


Secrets = Callable[[str], str | None] | None
"""Looks up a `secret:` reference (None: not found)."""


class ConfigError(ValueError):
    """A config problem; the message names the file, the field and the fix."""


@dataclass
class Config:
    values: dict[str, Any]
    sources: dict[str, str]
    file: Path | None
    warnings: list[str] = field(default_factory=list)

    def raw(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.values
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def get(
        self, dotted: str, default: Any = None, *, environ: Mapping[str, str] | None = None, secrets: Secrets = None
    ) -> Any:
        """The value at `a.b.c`, with `env:`/`secret:` references resolved."""
        value = self.raw(dotted, default)
        return resolve(value, field=dotted, file=self.file, environ=environ, secrets=secrets)

    def plugin_settings(self, dist: str) -> dict[str, Any]:
        table = self.raw(f"plugins.{dist}", {})
        return dict(table) if isinstance(table, dict) else {}

    def flat(self, prefix: str = "", node: dict[str, Any] | None = None) -> list[tuple[str, Any, str]]:
        """(dotted key, raw value, source) for every leaf (under table `node` at `prefix`), in sorted order."""
        rows: list[tuple[str, Any, str]] = []
        for key, value in sorted((self.values if node is None else node).items()):
            dotted = f"{prefix}.{key}" if prefix else key
            leaf = [(dotted, value, self.sources.get(dotted, "default"))]
            rows += self.flat(dotted, value) if isinstance(value, dict) else leaf
        return rows


def find_config_file(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    from pathlib import Path

    environ = os.environ if environ is None else environ
    named = environ.get(CONFIG_VAR)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(f"{CONFIG_VAR}={named}: no such file (unset {CONFIG_VAR} or point it at a config.toml)")
        return path
    here = (cwd or Path.cwd()).resolve()
    return next((f / CONFIG_RELPATH for f in (here, *here.parents) if (f / CONFIG_RELPATH).is_file()), None)


plugin_layers: Callable[..., None] | None = None
"""Plugins' `agentenv_config_layer` hooks (the runtime's AGENTENV_* variables), set by the plugin host when it
starts (every `agentenv` command has one), so this module never imports the host."""


def load_config(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, the file, then plugins' layers (hook agentenv_config_layer); `agentenv run` flags go over all."""
    environ = os.environ if environ is None else environ
    path = find_config_file(cwd, environ)
    config = Config({table: dict(entries) for table, entries in DEFAULTS.items()}, {}, path)
    values, sources, warnings = config.values, config.sources, config.warnings
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8")) if path else {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc} (fix the syntax at that line)") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
            "TOML must be UTF-8: save the file as UTF-8"
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot be read ({exc.strerror}); fix its permissions or set AGENTENV_CONFIG"
        ) from None
    for table, content in data.items():
        if table not in KNOWN_TABLES:
            warnings.append(f"{path}: unknown table [{table}] is ignored (known: {', '.join(KNOWN_TABLES)})")
            continue
        if not isinstance(content, dict):
            raise ConfigError(f"{path}: `{table}` must be a table ([{table}]), not a {type(content).__name__}")
        _merge(values.setdefault(table, {}), content, table, str(path), sources)
    if plugin_layers is not None:
        plugin_layers(values=values, sources=sources, environ=environ)
    return config


def _merge(target: dict[str, Any], new: dict[str, Any], prefix: str, source: str, sources: dict[str, str]) -> None:
    for key, value in new.items():
        dotted = f"{prefix}.{key}"
        if isinstance(value, dict):
            _merge(target.setdefault(key, {}), value, dotted, source, sources)
        else:
            target[key] = value
            sources[dotted] = source


def resolve(
    value: Any, *, field: str, file: Path | None, environ: Mapping[str, str] | None = None, secrets: Secrets = None
) -> Any:
    """Resolve one `env:`/`secret:` reference; other values pass through."""
    if not isinstance(value, str):
        return value
    where = f"{file or 'config'}: {field}"
    match = _ENV_REF.match(value)
    if match:
        environ = os.environ if environ is None else environ
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{where}: environment variable {name} is not set (export it, or write env:{name}?default)")
    if value.startswith("secret:"):
        key = value[len("secret:") :]
        found = secrets(key) if secrets else None
        if found is None:
            raise ConfigError(f"{where}: secret {key!r} was not found in the secret store (add it, or change {field})")
        return found
    return value


def is_secret(dotted: str, raw: Any) -> bool:
    """Values never printed in clear: secret references and anything whose key names a credential."""
    if isinstance(raw, str) and raw.startswith("secret:"):
        return True
    # [store] secret = "env" names a backend; only plugin, model and world settings can hold credentials.
    return not dotted.startswith(NAMING_TABLES) and bool(_SECRET_KEY.search(dotted.rsplit(".", 1)[-1]))


_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_SECRET_VALUE = re.compile(r"(sk|pk|rk)-[\w-]{8}|(ghp|gho|github_pat|xox[abpr])[-_]\w{8}|AKIA[0-9A-Z]{16}")


def mask_text(text: str) -> str:
    """`text` with URL credentials (`user:pass@`) masked, or `****` when it looks like an API key itself."""
    return "****" if _SECRET_VALUE.match(text) else _URL_USERINFO.sub("****@", text)


def display_value(dotted: str, raw: Any, environ: Mapping[str, str] | None = None) -> str:
    """How `config show` prints a value: references say what they point at; secrets are masked."""
    environ = os.environ if environ is None else environ
    if isinstance(raw, str) and raw.startswith("secret:"):
        return f"{raw} → ****"
    if isinstance(raw, str) and (match := _ENV_REF.match(raw)):
        name = match.group(1)
        if name not in environ:
            return f"{raw} → (unset{', default used' if match.group(2) is not None else ''})"
        shown = "****" if is_secret(dotted, raw) else mask_text(environ[name])
        return f"{raw} → {shown}"
    if is_secret(dotted, raw) and raw:
        return "**** (a literal secret: move it to env: or secret:)"
    return repr(raw) if not isinstance(raw, str) else mask_text(raw)
