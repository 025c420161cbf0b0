"""The runtime's commands spare pydantic its plugin scan only when no installed distribution declares a plugin;
an installed pydantic plugin still sees every model, and a new one is noticed at once (the answer is cached with
plugin discovery, keyed by what is installed)."""

from __future__ import annotations

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
