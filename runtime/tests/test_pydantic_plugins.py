"""The runtime's commands spare pydantic its plugin scan only when no installed distribution declares a plugin;
an installed pydantic plugin still sees every model, and a new one is noticed at once (the answer is cached with
plugin discovery, keyed by what is installed). With none installed, pydantic's loader is not even imported (nor
`importlib.metadata` with it) until a name other than `get_plugins` is read from it."""

from __future__ import annotations

import json
from pathlib import Path

from agentenv_testing.installs import dist_info_dirname, run_python

PLUGIN = """
SEEN = []


class Plugin:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, plugin_settings):
        SEEN.append(schema_type_path.name)
        return None, None, None


plugin = Plugin()
"""

CHECK = """
import agentenv_runtime.cli  # what `agentenv run` and the other runtime commands import first
from pydantic import BaseModel
from pydantic.plugin import _loader

def refuse(**kwargs):
    raise AssertionError("pydantic read the installed entry points")

scanned = _loader._plugins is None
if not scanned:
    _loader.entry_points = refuse

class Greeting(BaseModel):
    text: str

assert Greeting.model_validate({"text": "hi"}).text == "hi"
import sys
seen = sys.modules["fixture_pydantic_plugin"].SEEN if "fixture_pydantic_plugin" in sys.modules else []
print(scanned, "Greeting" in seen)
"""


def install_pydantic_plugin(root: Path) -> Path:
    """A distribution whose `pydantic` entry point is a plugin that notes every model it sees."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "fixture_pydantic_plugin.py").write_text(PLUGIN, encoding="utf-8")
    meta = root / dist_info_dirname("fixture-pydantic-plugin", "1.0")
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: fixture-pydantic-plugin\nVersion: 1.0\n")
    (meta / "entry_points.txt").write_text("[pydantic]\nfixture = fixture_pydantic_plugin:plugin\n")
    (meta / "RECORD").write_text("")
    return root


def test_no_pydantic_plugin_installed_no_scan(tmp_path: Path) -> None:
    cache = {"AGENTENV_CACHE_DIR": str(tmp_path / "cache")}
    assert run_python(CHECK, env=cache).split() == ["False", "False"]
    assert run_python(CHECK, env=cache).split() == ["False", "False"], "the cached answer is used the same way"


def test_an_installed_pydantic_plugin_sees_every_model(tmp_path: Path) -> None:
    cache, site = {"AGENTENV_CACHE_DIR": str(tmp_path / "cache")}, tmp_path / "site"
    site.mkdir()
    assert run_python(CHECK, paths=[site], env=cache).split() == ["False", "False"]  # cached: none installed
    install_pydantic_plugin(site)  # into a folder already on the path: its new metadata folder is noticed
    assert run_python(CHECK, paths=[site], env=cache).split() == ["True", "True"]


def test_pydantic_switch_left_to_pydantic(tmp_path: Path) -> None:
    env = {"AGENTENV_CACHE_DIR": str(tmp_path / "cache"), "PYDANTIC_DISABLE_PLUGINS": "fixture"}
    plugins = install_pydantic_plugin(tmp_path / "site")
    assert run_python(CHECK, paths=[plugins], env=env).split() == ["True", "False"]


VALIDATES = """
import json, sys
import agentenv_runtime.cli
from pydantic import BaseModel, ValidationError

class Order(BaseModel):
    quantity: int

try:
    Order(quantity="many")
    refused = False
except ValidationError:
    refused = True
print(json.dumps([refused, Order(quantity="3").quantity, "importlib.metadata" in sys.modules]))
"""


def test_no_plugin_installed_validation_unchanged_and_no_metadata_import(tmp_path: Path) -> None:
    cache = {"AGENTENV_CACHE_DIR": str(tmp_path / "cache")}
    run_python("import agentenv_runtime.cli", env=cache)  # the first start caches the scan's verdict
    refused, quantity, metadata_imported = json.loads(run_python(VALIDATES, env=cache))
    assert refused is True and quantity == 3
    assert metadata_imported is False, "pydantic's loader (and importlib.metadata) were imported"


def test_any_other_loader_name_loads_pydantics_own_loader_told_no_plugins(tmp_path: Path) -> None:
    facts = run_python(
        """
        import json, sys
        import agentenv_runtime.cli
        from agentenv_runtime.pydantic_plugins import LOADER
        stand_in = sys.modules[LOADER]
        from pydantic.plugin._loader import PYDANTIC_ENTRY_POINT_GROUP, get_plugins
        real = sys.modules[LOADER]
        print(json.dumps([stand_in is not real, PYDANTIC_ENTRY_POINT_GROUP, real.__file__.endswith("_loader.py"),
                          real._plugins, list(get_plugins())]))
        """,
        env={"AGENTENV_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert json.loads(facts) == [True, "pydantic", True, {}, []]


def test_a_loader_pydantic_imported_already_is_told_no_plugins(tmp_path: Path) -> None:
    facts = run_python(
        """
        import json, sys
        import pydantic.plugin._loader as loader
        import agentenv_runtime.cli
        print(json.dumps([sys.modules["pydantic.plugin._loader"] is loader, loader._plugins]))
        """,
        env={"AGENTENV_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert json.loads(facts) == [True, {}]
