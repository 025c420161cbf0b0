"""Contributions registered by name (`ClassRef`): imported only when used, and broken ones reported clearly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from agentenv import ContributionError, PluginHost
from agentenv.contracts import kinds
from agentenv.plugins import problems as codes
from agentenv_runtime.engine.engine import preflight
from agentenv_runtime.engine.task import TaskError
from agentenv_testing.installs import install_fixture_plugin, run_cli, run_python, step_module
from engine_helpers import task_file

REF_PLUGIN = """
from agentenv.contracts import ClassRef
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_steps():
    return [
        ClassRef("ref_used", "fixture_ref_used:Step0"),
        ClassRef("ref_unused", "fixture_ref_unused:Step0"),
        ClassRef("ref_misnamed", "fixture_ref_used:Step0"),
        ClassRef("ref_missing", "fixture_ref_nowhere:Step0"),
        ClassRef("ref_undeclared", "fixture_ref_undeclared:Step0"),
    ]
"""


@pytest.fixture
def refs(on_path: Path) -> Path:
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-refs",
        "1.0.0",
        "fixture-refs",
        "fixture_refs_plugin",
        REF_PLUGIN,
        extra_modules={
            "fixture_ref_used": step_module("ref_used"),
            "fixture_ref_unused": step_module("ref_unused"),
            "fixture_ref_undeclared": "import agentenv_fixture_sdk_nobody_declared\n" + step_module("ref_undeclared"),
        },
    )
    return on_path


def test_listing_a_kind_imports_none_of_its_classes(refs: Path) -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "fixture-refs"})
    names = {"ref_used", "ref_unused", "ref_misnamed", "ref_missing", "ref_undeclared"}
    assert set(host.registry(kinds.STEPS)) == names
    assert "fixture_ref_used" not in sys.modules and "fixture_ref_unused" not in sys.modules


def test_using_one_imports_only_that_one(refs: Path) -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "fixture-refs"})
    assert host.get(kinds.STEPS, "ref_used").__name__ == "Step0"
    assert "fixture_ref_used" in sys.modules and "fixture_ref_unused" not in sys.modules


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("ref_misnamed", "fixture_ref_used:Step0 is named 'ref_used', not 'ref_misnamed'"),
        ("ref_missing", "importing fixture_ref_nowhere:Step0 failed: ModuleNotFoundError"),
    ],
)
def test_a_broken_ref_is_a_plugin_problem_with_a_fix(refs: Path, name: str, reason: str) -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "fixture-refs"})
    with pytest.raises(ContributionError, match="fix: ") as caught:
        host.get(kinds.STEPS, name)
    assert f"step {name!r} of agentenv-fixture-refs cannot be loaded: {reason}" in str(caught.value)
    with pytest.raises(ContributionError) as again:
        host.get(kinds.STEPS, name)
    assert again.value is caught.value, "a failed ref is not imported again"
    (problem,) = host.problems()
    assert problem.code == codes.INVALID_CONTRIBUTION and reason in problem.message
    assert name not in host.usable(kinds.STEPS), "listings leave a broken contribution out"


def test_preflight_names_the_step_and_field_of_a_broken_step_type(refs: Path, tmp_path: Path) -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "fixture-refs"})
    task = task_file(tmp_path, [{"id": "a", "type": "ref_used"}, {"id": "b", "type": "ref_missing"}])
    with pytest.raises(TaskError) as caught:
        preflight(task, host)
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"{task.path}: step 'b': field `type`: step 'ref_missing' of agentenv-fixture-refs")


def test_plugin_check_imports_every_ref_and_reports_the_broken_ones(refs: Path) -> None:
    result = run_cli("plugin", "check", "--json", paths=[refs], env={"AGENTENV_PLUGINS": "fixture-refs"})
    assert result.returncode == 1, result
    messages = sorted(p["message"] for p in result.json()["problems"])
    assert len(messages) == 3, messages
    assert "ref_misnamed" in messages[0] and "ref_missing" in messages[1] and "ref_undeclared" in messages[2]


@pytest.mark.parametrize(
    ("name", "fix"),
    [
        (  # the module a ref names imports a package its distribution does not declare
            "ref_undeclared",
            "agentenv-fixture-refs imports 'agentenv_fixture_sdk_nobody_declared', which no installed distribution "
            "provides: declare it in its dependencies",
        ),
        ("ref_missing", "no module 'fixture_ref_nowhere': correct the ClassRef's target in agentenv-fixture-refs"),
    ],
)
def test_a_ref_whose_module_cannot_import_gets_the_fix_for_its_cause(refs: Path, name: str, fix: str) -> None:
    """The same fixes a plugin module that fails to import gets, not a generic "fix or upgrade"."""
    host = PluginHost(environ={"AGENTENV_PLUGINS": "fixture-refs"})
    with pytest.raises(ContributionError) as caught:
        host.get(kinds.STEPS, name)
    assert f"; fix: {fix}, or disable it: AGENTENV_DISABLE_PLUGINS=fixture-refs" in str(caught.value)


def test_a_store_registered_by_name_needs_its_kind(on_path: Path) -> None:
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-ref-store",
        "1.0.0",
        "fixture-ref-store",
        "fixture_ref_store_plugin",
        """
        from agentenv.contracts import ClassRef
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_stores():
            return [ClassRef("blob", "somewhere:Blob")]
        """,
    )
    host = PluginHost(environ={"AGENTENV_PLUGINS": "fixture-ref-store"})
    host.load([kinds.STORES])
    (problem,) = host.problems()
    assert "store 'blob' has no valid `kind` (document, object, secret, image)" in problem.message


def test_stores_by_name_are_keyed_by_kind_and_imported_on_use() -> None:
    out = run_python(
        """
        import sys
        from agentenv.contracts import kinds
        from agentenv.plugins.host import PluginHost

        host = PluginHost(environ={"AGENTENV_PLUGINS": "store-local"})
        keys = sorted(host.registry(kinds.STORES))
        before = sorted(m for m in sys.modules if m.startswith("agentenv_store_local."))
        cls = host.get(kinds.STORES, "document:sqlite")
        after = sorted(m for m in sys.modules if m.startswith("agentenv_store_local."))
        print(keys, before, cls.__name__, after)
        """
    )
    assert out.split() == [
        "['document:sqlite',",
        "'image:local',",
        "'object:filesystem',",
        "'secret:env']",
        "['agentenv_store_local.plugin']",
        "SqliteDocumentStore",
        "['agentenv_store_local._files',",
        "'agentenv_store_local.document',",
        "'agentenv_store_local.plugin',",
        "'agentenv_store_local.wal']",
    ]
