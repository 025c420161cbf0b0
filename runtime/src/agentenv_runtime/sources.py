"""Where `agentenv run TARGET` finds a bundle: a folder, an installed bundle's name, an exported `.tar.gz`,
or `registry://NAME@VERSION` (pulled from the configured stores). The last two unpack into the cache by
content hash, so the same archive or version is unpacked once and reads the same everywhere."""

from __future__ import annotations

from pathlib import Path

from agentenv.plugins.host import PluginHost

from agentenv_runtime.engine.bundle import Bundle, find_bundle, read_bundle
from agentenv_runtime.engine.task import TaskError

EXPORT_SUFFIXES = (".tar.gz", ".tgz")


def is_export(target: str) -> bool:
    return target.endswith(EXPORT_SUFFIXES) and Path(target).is_file()


def find_any_bundle(target: str, host: PluginHost) -> Bundle:
    if target.startswith("registry://"):
        from agentenv.config import load_config

        from agentenv_runtime.registry import RegistryError, bundle_folder

        try:
            return read_bundle(bundle_folder(target, load_config(), host))
        except RegistryError as exc:
            raise TaskError(str(exc)) from exc
    if is_export(target):
        from agentenv_runtime.export import exported_folder

        return read_bundle(exported_folder(Path(target)))
    return find_bundle(target, host)
