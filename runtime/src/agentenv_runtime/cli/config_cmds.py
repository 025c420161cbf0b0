"""`agentenv config explain KEY | sources | debug`: sub-commands the runtime adds to the kernel's `config` group.

The kernel only loads the file and calls the layer hook; what each key means, which layers exist and what each
set lives here, next to the `AGENTENV_*` layer it describes.
"""

from __future__ import annotations

import difflib
import os
import sys
from typing import Annotated, Any

import typer
from agentenv import fail, get_host, print_json, print_table
from agentenv.config import CONFIG_VAR, Config, ConfigError, display_value, find_config_file, load_config

from agentenv_runtime.config.catalog import catalog
from agentenv_runtime.config.env_layer import env_keys

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
FLAGS_LAYER = "`agentenv run` options (--sandbox, --model, --model-url, --seed) over every layer, per run"


def _load() -> Config:
    try:
        config = load_config()
    except ConfigError as exc:
        fail(str(exc))
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return config


def _generic(key: str, known: dict[str, Any]) -> Any:
    """The catalog entry of `key`, or of the pattern it fits (`agents.<kind>.model` for any kind's key)."""
    if key in known:
        return known[key]
    parts = key.split(".")
    if parts[0] == "agents" and len(parts) == 3:
        for name, info in known.items():
            if name.startswith("agents.") and name.endswith(f".{parts[2]}"):
                return info
    return None


def explain_data(key: str, config: Config) -> dict[str, Any]:
    known = catalog(get_host())
    info = _generic(key, known)
    raw = config.raw(key)
    if info is None and raw is None:
        close = difflib.get_close_matches(key, list(known), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `agentenv config debug` lists every known key"
        fail(f"no config key {key!r} is known to this install{hint}")
    data = (info.as_dict() if info else {"key": key, "does": "", "type": "", "default": None, "reader": None}) | {
        "key": key,
        "value": display_value(key, raw, os.environ) if raw is not None else None,
        "set_in": config.sources.get(key, "default" if raw is not None else "not set"),
    }
    if info is None:
        data["does"] = "no installed plugin declares this key: a typo, or the plugin that reads it is not installed"
    return data


def explain(key: Annotated[str, typer.Argument(help="Dotted key, e.g. sandbox.default or model.base_url.")],
            as_json: JsonFlag = False) -> None:  # fmt: skip
    """What KEY does, its type, default, where it is set and which plugin reads it."""
    data = explain_data(key, _load())
    if as_json:
        print_json(data)
        return
    for label, field in (("key", "key"), ("does", "does"), ("type", "type"), ("default", "default"),
                         ("value", "value"), ("set in", "set_in"), ("read by", "reader")):  # fmt: skip
        value = data[field]
        print(f"{label + ':':9}{value if value not in (None, '') else '-'}")


def sources_data(config: Config) -> list[dict[str, Any]]:
    """Every layer, lowest first, with what it found."""
    named = os.environ.get(CONFIG_VAR)
    try:
        file = find_config_file()
    except ConfigError:
        file = None
    variables = [{"variable": var, "key": key} for var, key, _ in env_keys(os.environ)]
    return [
        {"layer": "defaults", "what": "built-in defaults of the kernel and of each plugin's settings", "found": []},
        {
            "layer": "file",
            "what": f"${CONFIG_VAR}" if named else ".agentenv/config.toml, walking up from the working directory",
            "found": [str(file)] if file else [],
        },
        {"layer": "env", "what": "AGENTENV_<TABLE>__<KEY> variables (each __ is one table deeper)", "found": variables},
        {"layer": "flags", "what": FLAGS_LAYER, "found": []},
    ]


def sources(as_json: JsonFlag = False) -> None:
    """Every layer in order (defaults, file, AGENTENV_* variables, flags), with the files and variables found."""
    layers = sources_data(_load())
    if as_json:
        print_json({"layers": layers})
        return
    for index, layer in enumerate(layers, start=1):
        print(f"{index}. {layer['layer']}: {layer['what']}")
        for found in layer["found"]:
            print(f"     {found['variable']} → {found['key']}" if isinstance(found, dict) else f"     {found}")
        if layer["layer"] in ("file", "env") and not layer["found"]:
            print("     (none found)")


def debug_data(config: Config) -> dict[str, Any]:
    known = catalog(get_host())
    values = [
        {"key": key, "value": display_value(key, raw, os.environ), "source": source, "known": _generic(key, known)
         is not None}
        for key, raw, source in config.flat()
    ]  # fmt: skip
    return {
        "file": str(config.file) if config.file else None,
        "layers": sources_data(config),
        "values": values,
        "unknown_keys": [row["key"] for row in values if not row["known"]],
        "warnings": config.warnings,
        "plugins": {info.dist: info.status for info in get_host().infos},
    }


def debug(as_json: JsonFlag = False) -> None:
    """Everything config loading saw: layers, every value with its source, keys no plugin reads, warnings."""
    data = debug_data(_load())
    if as_json:
        print_json(data)
        return
    print(f"config file: {data['file'] or '(none: local defaults)'}")
    for layer in data["layers"]:
        found = ", ".join(f["variable"] if isinstance(f, dict) else f for f in layer["found"]) or "-"
        print(f"layer {layer['layer']}: {found}")
    print_table(("KEY", "VALUE", "SOURCE", "KNOWN"), [(r["key"], r["value"], r["source"], "yes" if r["known"] else
                                                        "NO") for r in data["values"]])  # fmt: skip
    for key in data["unknown_keys"]:
        print(f"warning: no installed plugin reads {key}: a typo, or its plugin is not installed", file=sys.stderr)
