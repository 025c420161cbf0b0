"""agentenv: build simulated worlds for AI agents once, then host many tasks and any agent in them.

The kernel's public surface (docs/public-api.md lists each name with its stability promise): this package,
`agentenv.contracts`, `agentenv.hookspecs` and `agentenv.config`. Every other `agentenv.*` module is private and
may move in any release. Names load on first use (PEP 562): `agentenv --help` must not pay for them.
"""

from __future__ import annotations

from agentenv.contracts.lazy import lazy_getattr

TYPE_CHECKING = False  # not `typing`'s: importing `typing` is a sixth of a cached `agentenv --help`

__version__ = "0.1.0"

if TYPE_CHECKING:  # for type checkers (exported through __all__); at run time __getattr__ imports them
    from agentenv.cli.main import collect_garbage_again, main
    from agentenv.cli.output import fail, print_json, print_table
    from agentenv.cli.plugin_cmd import installer
    from agentenv.plugins.cache import cached
    from agentenv.plugins.compat import installed_version
    from agentenv.plugins.first_party import FIRST_PARTY
    from agentenv.plugins.host import ContributionError, PluginHost, get_host, reset_host
    from agentenv.plugins.info import PluginInfo
    from agentenv.plugins.problems import Problem
    from agentenv.plugins.requirements import canonical
    from agentenv.plugins.validate import validate_contribution

__all__ = ["ContributionError", "PluginHost", "PluginInfo", "Problem", "__version__", "cached", "canonical"]
__all__ += ["collect_garbage_again", "fail", "get_host", "installed_version", "main", "print_json", "print_table"]
__all__ += ["FIRST_PARTY", "installer", "reset_host", "validate_contribution"]
_HOMES = {  # private module -> the public names it holds
    "cli.main": "collect_garbage_again main", "cli.output": "fail print_json print_table", "plugins.cache": "cached",
    "plugins.compat": "installed_version", "plugins.host": "ContributionError PluginHost get_host reset_host",
    "plugins.info": "PluginInfo", "plugins.problems": "Problem", "plugins.requirements": "canonical",
    "plugins.validate": "validate_contribution", "cli.plugin_cmd": "installer", "plugins.first_party": "FIRST_PARTY",
}
__getattr__ = lazy_getattr(__name__, _HOMES)
