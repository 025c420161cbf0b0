"""The architecture check (`tests/architecture.py`, run by `./dev test`): this repository passes it, and it fails
on each kind of violation it exists to catch, naming the file, the line and the public home to use instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from architecture import count, main, violations


def write(root: Path, relative: str, text: str = "") -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def distribution(root: Path, folder: str, name: str, modules: dict[str, str]) -> None:
    write(root, f"{folder}/pyproject.toml", f'[project]\nname = "{name}"\nversion = "0.1.0"\n')
    for module, text in modules.items():
        write(root, f"{folder}/src/{module}", text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small repository shaped like ours: kernel, runtime, testing and one plugin, all clean."""
    distribution(tmp_path, "kernel", "agentenv-kernel", {
        "agentenv/__init__.py": "", "agentenv/plugins/__init__.py": "", "agentenv/plugins/host.py": "",
        "agentenv/contracts/__init__.py": "", "agentenv/contracts/step.py": "",
    })
    distribution(tmp_path, "runtime", "agentenv-runtime", {
        "agentenv_runtime/__init__.py": "", "agentenv_runtime/world/__init__.py": "",
        "agentenv_runtime/world/world.py": "from agentenv.plugins.host import get_host\n",
    })
    distribution(tmp_path, "testing", "agentenv-testing", {"agentenv_testing/__init__.py": ""})
    distribution(tmp_path, "plugins/envs/foo", "agentenv-foo", {
        "agentenv_foo/__init__.py": "", "agentenv_foo/api.py": "from agentenv_foo._impl import Foo\n",
        "agentenv_foo/_impl.py": "from agentenv import get_host\nfrom agentenv_runtime import World\n",
    })
    return tmp_path


def test_this_repository_passes() -> None:
    assert [str(v) for v in violations()] == []
    assert count()["plugin and example source"] == 0


def test_a_clean_repository_passes_except_for_the_runtime_reaching_into_the_kernel(repo: Path) -> None:
    assert [(str(v.path), v.imported) for v in violations(repo)] == [
        ("runtime/src/agentenv_runtime/world/world.py", "agentenv.plugins.host")
    ]


def test_a_plugin_importing_a_runtime_module_fails(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    late_import = "def f():\n    from agentenv_runtime.world.world import World\n"
    write(repo, "plugins/envs/foo/src/agentenv_foo/env.py", late_import)
    assert main(["--root", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "plugins/envs/foo/src/agentenv_foo/env.py:2: imports agentenv_runtime.world.world (agentenv-runtime)" in err
    assert "import it from agentenv_runtime" in err


def test_a_plugin_importing_a_kernel_internal_fails(repo: Path) -> None:
    write(repo, "plugins/envs/foo/src/agentenv_foo/cli.py", "from agentenv.contracts.step import Step\n")
    found = [v for v in violations(repo) if v.path.name == "cli.py"]
    assert [(v.line, v.imported, v.owner) for v in found] == [(1, "agentenv.contracts.step", "agentenv-kernel")]
    assert "agentenv.contracts" in found[0].why


def test_importing_another_plugins_private_module_fails_even_under_type_checking(repo: Path) -> None:
    distribution(repo, "plugins/envs/bar", "agentenv-bar", {
        "agentenv_bar/__init__.py": "",
        "agentenv_bar/env.py": "import typing\nif typing.TYPE_CHECKING:\n    from agentenv_foo._impl import Foo\n",
        "agentenv_bar/ok.py": "from agentenv_foo.api import Foo\nfrom agentenv_foo import api\n",
    })
    found = [(str(v.path), v.imported) for v in violations(repo) if "bar" in str(v.path)]
    assert found == [("plugins/envs/bar/src/agentenv_bar/env.py", "agentenv_foo._impl")]


def test_the_kernel_importing_any_other_distribution_fails(repo: Path) -> None:
    write(repo, "kernel/src/agentenv/plugins/load.py", "import agentenv_runtime\nfrom agentenv_foo.api import Foo\n")
    found = [v for v in violations(repo) if v.path.name == "load.py"]
    assert [v.imported for v in found] == ["agentenv_runtime", "agentenv_foo.api"]
    assert all("the kernel imports no other distribution" in v.why for v in found)
