"""Registration: the entry point, the hook, and that nothing imports the modal SDK before it is used."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from agentenv import PluginHost, validate_contribution
from agentenv.contracts import kinds
from agentenv_modal import plugin
from agentenv_modal.provider import ModalProvider, ModalVmProvider


def test_entry_point_is_declared() -> None:
    found = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "modal"]
    assert len(found) == 1
    assert found[0].value == "agentenv_modal.plugin"
    assert found[0].dist is not None and found[0].dist.metadata["Name"] == "agentenv-modal"


def test_hook_returns_two_valid_providers() -> None:
    classes = [ref.load() for ref in plugin.agentenv_register_sandbox_providers()]
    assert classes == [ModalProvider, ModalVmProvider]
    assert validate_contribution(kinds.SANDBOX_PROVIDERS, ModalProvider) == ("modal", None)
    assert validate_contribution(kinds.SANDBOX_PROVIDERS, ModalVmProvider) == ("modal-vm", None)
    assert ModalProvider.modes == frozenset({"container"})
    assert ModalVmProvider.modes == frozenset({"container", "vm"})


def test_kernel_loads_the_plugin() -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "modal"})
    info = host.find("agentenv-modal")
    assert info is not None and info.status == "ok", info and info.problems
    providers = host.registry(kinds.SANDBOX_PROVIDERS)
    assert providers["modal"].obj is ModalProvider and providers["modal-vm"].obj is ModalVmProvider


def test_registering_does_not_import_the_sdk() -> None:
    code = (
        "import sys\n"
        "from agentenv_modal import plugin\n"
        "classes = [ref.load() for ref in plugin.agentenv_register_sandbox_providers()]\n"
        "[cls({}) for cls in classes]\n"
        "heavy = [m for m in sys.modules if m == 'modal' or m.startswith(('modal.', 'modal_proto', 'grpclib'))]\n"
        "assert not heavy, heavy[:5]\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
