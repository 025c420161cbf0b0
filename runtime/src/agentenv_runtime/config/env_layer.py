"""The `AGENTENV_<TABLE>__<KEY>` layer: environment variables over the config file, under `agentenv run` flags.

`AGENTENV_SANDBOX__DEFAULT=docker` sets `[sandbox] default`; each `__` goes one table deeper. Names are
case-insensitive; in `plugins`, the distribution's underscores stand for its hyphens
(`AGENTENV_PLUGINS__AGENTENV_DOCKER__DOCKER__PULL` is `[plugins.agentenv-docker.docker] pull`), since a variable
name cannot hold a hyphen. A value keeps the type of what it replaces (a number stays a number: a word where one
is expected is an error naming the variable); a new key is read as a TOML value (`true`, `3`, `[1, 2]`) and
otherwise taken as text. Variables without `__` (`AGENTENV_CONFIG`, `AGENTENV_STATE_DIR`) are not config keys.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from typing import Any

from agentenv.config import KNOWN_TABLES, ConfigError

PREFIX = "AGENTENV_"
SEPARATOR = "__"
SOURCE = "env {}"
"""How a key set by a variable names its source (`config show`, `config explain`)."""


def env_keys(environ: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(variable, dotted key, raw text) for every `AGENTENV_<TABLE>__<KEY>` variable, sorted by variable."""
    found = []
    for name in sorted(environ):
        if not name.upper().startswith(PREFIX) or SEPARATOR not in name:
            continue
        parts = [part.lower() for part in name[len(PREFIX) :].split(SEPARATOR)]
        if len(parts) < 2 or parts[0] not in KNOWN_TABLES or not all(parts):
            continue
        if parts[0] == "plugins":
            parts[1] = parts[1].replace("_", "-")
        found.append((name, ".".join(parts), environ[name]))
    return found


def coerce(text: str, current: Any, variable: str) -> Any:
    """`text` as the type of `current` (the value it replaces), or as a TOML value when there is none."""
    if isinstance(current, bool):
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise ConfigError(f"{variable}={text!r}: expected true or false (the key is a boolean)")
    if isinstance(current, int | float):
        kind = type(current)
        try:
            return kind(text.strip())
        except ValueError:
            what = "an int" if kind is int else "a float"
            raise ConfigError(f"{variable}={text!r}: expected {what} (the key is one); fix the value") from None
    if isinstance(current, list | dict):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, type(current)):
            shape = "[...]" if isinstance(current, list) else "{...}"
            raise ConfigError(f"{variable}={text!r}: expected a JSON {type(current).__name__} like {shape}")
        return value
    if current is not None:
        return text
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply(values: dict[str, Any], sources: dict[str, str], environ: Mapping[str, str]) -> None:
    """Put every `AGENTENV_<TABLE>__<KEY>` variable's value into `values`, its source into `sources`."""
    for variable, dotted, text in env_keys(environ):
        *tables, leaf = dotted.split(".")
        node = values
        for depth, part in enumerate(tables):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                where = ".".join(tables[: depth + 1])
                raise ConfigError(f"{variable}: `{where}` is a value, not a table; drop the extra `__` parts")
            node = child
        if isinstance(node.get(leaf), dict):
            raise ConfigError(f"{variable}: `{dotted}` is a table; name a key inside it ({dotted}.KEY)")
        node[leaf] = coerce(text, node.get(leaf), variable)
        sources[dotted] = SOURCE.format(variable)
