"""Registration: the entry point, the hook, and what the kernel makes of them."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from agentenv import PluginHost, validate_contribution
from agentenv.contracts import StoreBackend, kinds
from agentenv_store_local import plugin

EXPECTED = {
    "document:sqlite": "SqliteDocumentStore",
    "object:filesystem": "FilesystemObjectStore",
    "secret:env": "EnvSecretStore",
    "image:local": "LocalImageStore",
}


def test_entry_point_is_declared() -> None:
    found = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "store-local"]
    assert len(found) == 1
    assert found[0].value == "agentenv_store_local.plugin"
    assert found[0].dist is not None and found[0].dist.metadata["Name"] == "agentenv-store-local"


def test_hook_returns_valid_backends() -> None:
    keys = {}
    for ref in plugin.agentenv_register_stores():
        ref_key, problem = validate_contribution(kinds.STORES, ref)
        assert problem is None, problem
        cls = ref.load()
        assert issubclass(cls, StoreBackend)
        key, problem = validate_contribution(kinds.STORES, cls)
        assert (key, problem) == (ref_key, None)
        keys[key] = cls.__name__
    assert keys == EXPECTED


def test_kernel_loads_the_plugin() -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "store-local"})
    registry = host.registry(kinds.STORES)
    info = host.find("agentenv-store-local")
    assert info is not None and info.status == "ok", info and info.problems
    for key, class_name in EXPECTED.items():
        assert registry[key].obj.__name__ == class_name
        assert registry[key].dist == "agentenv-store-local"


def test_entry_module_is_light() -> None:
    code = (
        "import sys, agentenv_store_local.plugin\n"
        "heavy = [m for m in sys.modules if m.startswith('agentenv_store_local.') "
        "and m != 'agentenv_store_local.plugin']\n"
        "assert not heavy, heavy\n"
        "assert 'sqlite3' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
