"""Shared fixtures of the kernel tests: fixture plugin installs, in-process hosts, a clean environment."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests import plugin_fixtures (pytest runs in importlib mode)

from plugin_fixtures import AGENTENV_VARS, CliResult


@pytest.fixture(autouse=True)
def _no_agentenv_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start without the plugin allow/deny lists or a config override from the outer shell."""
    for var in AGENTENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on `sys.path` for in-process tests: fixture plugins installed there are discovered.

    The requirement check's version cache and the process-wide host are reset around the test, and modules
    imported from the directory are forgotten afterwards.
    """
    from agentenv.plugins.compat import installed_version
    from agentenv.plugins.host import reset_host

    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    installed_version.cache_clear()
    reset_host()
    yield root
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(root)):
            del sys.modules[name]
    installed_version.cache_clear()
    reset_host()


@pytest.fixture
def agentenv(capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[..., CliResult]]:
    """Run the `agentenv` dispatcher in this process (fresh plugin host each call); for fast CLI tests.

    Subprocess tests (`plugin_fixtures.run_cli`) prove the same paths in a fresh interpreter.
    """
    from agentenv.cli.main import main
    from agentenv.plugins.host import reset_host

    def run(*args: str) -> CliResult:
        reset_host()
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return CliResult(list(args), code, out, err)

    yield run
    reset_host()  # the next test must not see a host built under this test's env vars and sys.path
