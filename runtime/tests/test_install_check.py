"""`plugin check` sees what a run needs (bundle requirements, configured stores and sandbox chain),
`plugin remove` refuses to break an installed bundle, and `run` with no argument marks bundles that cannot run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_testing.installs import KERNEL_RANGE, CliResult, install_fixture_plugin

Cli = Callable[..., CliResult]


def install_bundle(site: Path, tmp_path: Path, requires: dict[str, str]) -> None:
    """A distribution `agentenv-fixture-bundle` registering bundle `fixture` that requires `requires`."""
    folder = tmp_path / "fixture-bundle"
    (folder / "tasks").mkdir(parents=True)
    lines = ['name = "fixture"', 'description = "a bundle for the check tests"', "", "[requires]"]
    lines += [f'{dist} = "{spec}"' for dist, spec in requires.items()]
    (folder / "bundle.toml").write_text("\n".join(lines) + "\n")
    source = f"""
        from pathlib import Path
        from agentenv.contracts import BundleRef
        from agentenv.hookspecs import hookimpl

        @hookimpl
        def agentenv_register_bundles():
            return [BundleRef("fixture", Path({str(folder)!r}), "a bundle for the check tests")]
    """
    install_fixture_plugin(site, "agentenv-fixture-bundle", "0.1.0", "fixture-bundle", "fixture_bundle", source)


def install_library(site: Path, dist: str, version: str = "0.1.0") -> None:
    """A plain plugin distribution with no contributions (something a bundle can require)."""
    module = dist.replace("-", "_")
    install_fixture_plugin(site, dist, version, dist.removeprefix("agentenv-"), module, "", requires=[KERNEL_RANGE])


def codes(result: CliResult) -> list[str]:
    return [problem["code"] for problem in result.json()["problems"]]


def test_a_bundle_needing_a_missing_plugin_fails_the_check_with_the_fix(on_path: Path, tmp_path: Path, agentenv: Cli):
    install_bundle(on_path, tmp_path, {"agentenv-fixture-missing": ">=0.1,<0.2"})
    result = agentenv("plugin", "check", "--json")
    assert result.returncode == 1, result
    (problem,) = [p for p in result.json()["problems"] if p["code"] == "bundle-requirement"]
    assert "bundle 'fixture' needs agentenv-fixture-missing>=0.1,<0.2, which is not installed" in problem["message"]
    assert problem["fix"] == "agentenv plugin add 'agentenv-fixture-missing>=0.1,<0.2'"
    listing = agentenv("run")
    row = next(line for line in listing.stdout.splitlines() if line.startswith("fixture "))
    assert "needs plugins" in row, listing


def test_an_out_of_range_requirement_says_what_is_installed(on_path: Path, tmp_path: Path, agentenv: Cli):
    install_library(on_path, "agentenv-fixture-lib", "0.3.0")
    install_bundle(on_path, tmp_path, {"agentenv-fixture-lib": ">=0.1,<0.2"})
    result = agentenv("plugin", "check", "--json")
    messages = [p["message"] for p in result.json()["problems"] if p["code"] == "bundle-requirement"]
    expected = "bundle 'fixture' needs agentenv-fixture-lib>=0.1,<0.2, but agentenv-fixture-lib 0.3.0 is installed"
    assert messages == [expected]


def test_a_met_bundle_is_ready_and_checks_clean(on_path: Path, tmp_path: Path, agentenv: Cli):
    install_library(on_path, "agentenv-fixture-lib")
    install_bundle(on_path, tmp_path, {"agentenv-fixture-lib": ">=0.1,<0.2"})
    assert "bundle-requirement" not in codes(agentenv("plugin", "check", "--json"))
    row = next(line for line in agentenv("run").stdout.splitlines() if line.startswith("fixture "))
    assert " ready " in row


def test_remove_refuses_while_an_installed_bundle_needs_it(on_path: Path, tmp_path: Path, agentenv: Cli):
    install_library(on_path, "agentenv-fixture-lib")
    install_bundle(on_path, tmp_path, {"agentenv-fixture-lib": ">=0.1,<0.2"})
    result = agentenv("plugin", "remove", "agentenv-fixture-lib")
    assert result.returncode != 0
    assert "removing agentenv-fixture-lib would break: bundle 'fixture' needs agentenv-fixture-lib" in result.stderr
    assert (on_path / "agentenv_fixture_lib-0.1.0.dist-info").is_dir(), "nothing was uninstalled"


def test_a_configured_store_nobody_provides_is_reported(
    tmp_path: Path, agentenv: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[store]\ndocument = "cassandra"\n')
    monkeypatch.setenv("AGENTENV_CONFIG", str(config))
    result = agentenv("plugin", "check", "--json")
    (problem,) = [p for p in result.json()["problems"] if p["code"] == "store-missing"]
    assert f"[store] document = 'cassandra' (from {config})" in problem["message"]
    assert "sqlite" in problem["fix"]


def test_a_chosen_sandbox_chain_with_no_installed_provider_is_reported(
    tmp_path: Path, agentenv: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "sandbox-missing" not in codes(agentenv("plugin", "check", "--json")), "the default chain is not checked"
    config = tmp_path / "config.toml"
    config.write_text('[sandbox]\ndefault = "nowhere,nothing"\n')
    monkeypatch.setenv("AGENTENV_CONFIG", str(config))
    result = agentenv("plugin", "check", "--json")
    (problem,) = [p for p in result.json()["problems"] if p["code"] == "sandbox-missing"]
    assert "[sandbox] default = 'nowhere,nothing'" in problem["message"] and "inline" in problem["fix"]
    config.write_text('[sandbox]\ndefault = "nowhere,inline"\n')  # a chain with one installed provider runs
    assert "sandbox-missing" not in codes(agentenv("plugin", "check", "--json"))


def test_a_foreign_agentenv_package_is_detected(on_path: Path, agentenv: Cli) -> None:
    meta = on_path / "agentenv-9.9.9.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: agentenv\nVersion: 9.9.9\n")
    (meta / "top_level.txt").write_text("agentenv\n")
    (meta / "RECORD").write_text("")
    result = agentenv("plugin", "check", "--json")
    (problem,) = [p for p in result.json()["problems"] if p["code"] == "foreign-package"]
    assert "agentenv also installs a top-level `agentenv`" in problem["message"]
    assert problem["fix"].startswith("pip uninstall agentenv && ")
    version = agentenv("--version")
    assert version.returncode == 0 and version.stdout.startswith("agentenv ")
    assert "warning: agentenv 9.9.9 also installs a top-level `agentenv`; fix: pip uninstall agentenv" in version.stderr


def test_a_bundle_whose_plugin_is_disabled_is_not_ready(
    on_path: Path, tmp_path: Path, agentenv: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A required plugin that is installed but turned off (AGENTENV_DISABLE_PLUGINS, or left out of AGENTENV_PLUGINS)
    or skipped as broken contributes nothing: the bundle needs it as much as if it were not installed."""
    install_library(on_path, "agentenv-fixture-lib")
    install_bundle(on_path, tmp_path, {"agentenv-fixture-lib": ">=0.1,<0.2"})
    monkeypatch.setenv("AGENTENV_DISABLE_PLUGINS", "fixture-lib")
    row = next(line for line in agentenv("run").stdout.splitlines() if line.startswith("fixture "))
    assert "needs plugins" in row
    result = agentenv("plugin", "check", "--json")
    (problem,) = [p for p in result.json()["problems"] if p["code"] == "bundle-requirement"]
    assert problem["message"] == (
        "bundle 'fixture' needs agentenv-fixture-lib>=0.1,<0.2; agentenv-fixture-lib 0.1.0 is installed but disabled "
        "(AGENTENV_DISABLE_PLUGINS=fixture-lib)"
    )
    assert problem["fix"] == "take fixture-lib out of AGENTENV_DISABLE_PLUGINS"
    refused = agentenv("run", "fixture")
    assert refused.returncode == 2 and "agentenv-fixture-lib 0.1.0 is installed but disabled" in refused.stderr
    monkeypatch.delenv("AGENTENV_DISABLE_PLUGINS")
    monkeypatch.setenv("AGENTENV_PLUGINS", "fixture-bundle,runtime")
    allowed = agentenv("plugin", "check", "--json")
    (problem,) = [p for p in allowed.json()["problems"] if p["code"] == "bundle-requirement"]
    assert problem["message"].endswith("is installed but disabled (not in AGENTENV_PLUGINS=fixture-bundle,runtime)")
    assert problem["fix"] == "add fixture-lib to AGENTENV_PLUGINS"
