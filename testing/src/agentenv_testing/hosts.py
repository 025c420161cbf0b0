"""A plugin host of exactly the plugin objects a test (or an embedding program) gives: no entry points.

    from agentenv_testing.hosts import host_of

    host = host_of(MyPlugin())          # modules, or objects with `@hookimpl` methods
    host.get(kinds.ENVS, "phone")
"""

from __future__ import annotations

from importlib.metadata import packages_distributions

from agentenv import PluginHost, PluginInfo


def host_of(*plugins: object) -> PluginHost:
    """A host of exactly these plugins, with no requirement checks. Each is named by its `__name__` (or class
    name); its distribution is the one that installed its top-level package, when there is one (plugin settings
    are looked up by it)."""
    owners = packages_distributions()
    infos, given = [], {}
    for plugin in plugins:
        name = getattr(plugin, "__name__", None) or type(plugin).__name__
        dist = (owners.get(name.partition(".")[0]) or [name])[0]
        infos.append(PluginInfo(name, dist, "0", name, [], requirement_problems=[]))
        given[name] = plugin
    return PluginHost(environ={}, infos=infos, given=given)
