"""Pydantic's plugin lookup answered from the discovery cache (`agentenv_runtime.pydantic_plugins`).

Each case runs a real interpreter of this environment (the finder acts once per process, on the first model)
with its own cache folder; a pydantic plugin is declared by a real distribution (metadata and an entry point
in a folder put on the path), as an installed one would be.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pydantic
from agentenv_runtime.pydantic_plugins import LOADER, _LoaderFinder

PROBE = """
import json, sys
import agentenv_runtime
from pydantic import BaseModel

class Order(BaseModel):
    id: int

scanned_first = "importlib.metadata" in sys.modules
Order(id=1)
from importlib.metadata import entry_points
print(json.dumps({
    "scanned_first": scanned_first,
    "declared": [ep.name for ep in entry_points(group="pydantic")],
    "seen": getattr(sys.modules.get("fake_pydantic_plugin"), "SEEN", []),
}))
"""

PLUGIN = """
SEEN = []

class Plugin:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, plugin_settings):
        SEEN.append(schema_type_path.name)
        return None, None, None

plugin = Plugin()
"""


def probe(cache: Path, extra_path: Path | None = None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTENV_NO_CACHE", "PYDANTIC_DISABLE_PLUGINS")}
    env["AGENTENV_CACHE_DIR"] = str(cache)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(extra_path), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def declare_plugin(folder: Path) -> None:
    """A distribution `fake-pydantic-plugin` whose entry point names a pydantic plugin."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fake_pydantic_plugin.py").write_text(PLUGIN)
    info = folder / "fake_pydantic_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-pydantic-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nfake = fake_pydantic_plugin:plugin\n")


def test_without_a_declared_plugin_no_distribution_is_scanned(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert probe(cache, tmp_path / "empty")["scanned_first"] is True  # the first start scans once, to fill the cache
    found = probe(cache, tmp_path / "empty")
    assert found["declared"] == [], "this environment declares a pydantic plugin: the fast path does not apply"
    assert found["scanned_first"] is False  # the next answers from it


def test_a_declared_plugin_is_loaded_and_an_install_is_noticed(tmp_path: Path) -> None:
    cache, site = tmp_path / "cache", tmp_path / "site"
    site.mkdir()
    assert probe(cache, site)["seen"] == []  # cached: no plugin
    declare_plugin(site)  # installed afterwards: the cache must not keep answering "none"
    found = probe(cache, site)
    assert found["declared"] == ["fake"]
    assert "Order" in found["seen"]  # pydantic's own loader ran and the plugin saw the model


def test_the_module_made_here_has_every_name_pydantics_loader_defines() -> None:
    """A pydantic release whose loader grows a name fails here, not in a user's first model."""
    source = Path(pydantic.__file__).parent / "plugin" / "_loader.py"  # not find_spec: the finder would answer
    assert LOADER == "pydantic.plugin._loader"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        defined |= {target.id for target in targets if isinstance(target, ast.Name)}
    module = type(sys)("made")
    _LoaderFinder().exec_module(module)
    assert defined and defined <= set(vars(module))
    assert tuple(module.get_plugins()) == ()
