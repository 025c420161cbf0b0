"""Load plugins lazily, validate what they register, and keep typed registries.

Discovery and requirement checks use metadata only. Plugin modules are imported on the first call that
needs a registry, and only the registration hooks of the asked-for kinds are called, so `agentenv --help`
imports the plugin modules but none of the classes (or SDKs) behind them.

A plugin that fails anywhere (import, hook validation, a bad or duplicate contribution) is skipped as a
whole, with the reason recorded; every other plugin keeps working.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import types
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar, cast

import pluggy

from agentenv import config, hookspecs
from agentenv.contracts import kinds
from agentenv.contracts.ref import ClassRef, load_target
from agentenv.contracts.registry import Kind
from agentenv.plugins import problems as codes
from agentenv.plugins.discovery import DENY_VAR, discover
from agentenv.plugins.info import PluginInfo
from agentenv.plugins.moved import moved_fix
from agentenv.plugins.problems import Problem

T = TypeVar("T")
SPEC_NAMES = frozenset(name for name in vars(hookspecs.AgentenvSpecs) if name.startswith("agentenv_"))


class ContributionError(LookupError):
    """A contribution registered by name (`ClassRef`) whose class cannot be imported or is invalid."""


class Entry(Generic[T]):
    """A registered contribution and the plugin that gave it.

    A contribution registered as a `ClassRef` has only its name until `obj` is first read; then its class is
    imported and validated, and a failure is recorded as a problem of its plugin and raised as a
    `ContributionError` that says what to do.
    """

    __slots__ = ("_error", "_info", "_kind", "_obj", "dist", "name", "plugin", "target")

    def __init__(self, name: str, obj: T | None, plugin: str, dist: str, *, target: str = "",
                 kind: Kind[T] | None = None, info: PluginInfo | None = None) -> None:  # fmt: skip
        self.name, self.plugin, self.dist, self.target = name, plugin, dist, target
        self._obj, self._kind, self._info = obj, kind, info
        self._error: ContributionError | None = None

    @property
    def obj(self) -> T:
        if self._obj is None:
            if self._error is not None:  # failed once: the same answer, without importing again
                raise self._error
            try:
                self._obj = self._resolve()
            except ContributionError as exc:
                self._error = exc
                raise
        return self._obj

    def _resolve(self) -> T:
        from agentenv.plugins.validate import validate_contribution

        assert self._kind is not None, "a contribution registered by name has a kind"
        label = f"{self._kind.label} {self.name!r}"
        fix = f"fix or upgrade {self.dist}"
        try:
            obj = load_target(self.target)
        except Exception as exc:  # third-party code: report, never crash the caller
            problem: str | None = f"importing {self.target} failed: {type(exc).__name__}: {exc}"
            fix = import_fix(exc, self.dist, self.target.partition(":")[0], "the ClassRef's target") or fix
        else:
            key, problem = validate_contribution(self._kind, obj)
            if problem is None and key != self.name:
                problem = f"{self.target} is named {key!r}, not {self.name!r}"
            if problem is None:
                return cast(T, obj)
        message = f"{label} of {self.dist} cannot be loaded: {problem}"
        fix = f"{fix}, or disable it: {DENY_VAR}={self.plugin}"
        if self._info is not None:
            self._info.problems.append(Problem(self.plugin, codes.INVALID_CONTRIBUTION, message, fix))
        raise ContributionError(f"{message}; fix: {fix}")


def import_fix(exc: Exception, dist: str, module: str, what: str) -> str | None:
    """The fix for a failed import: an old-API module, a module that is not there, or an undeclared package."""
    name = getattr(exc, "name", None)
    if moved_fix(name) or not isinstance(exc, ModuleNotFoundError):
        return moved_fix(name)
    missing = f"{name!r}, which no installed distribution provides: declare it in its dependencies"
    return f"no module {module!r}: correct {what} in {dist}" if name == module else f"{dist} imports {missing}"


def outranks(one: PluginInfo, other: PluginInfo) -> bool:
    """On a name two plugins claim, the one the other builds on (requires), or else a first-party distribution
    against an outside one, keeps it. Neither outranking the other is a tie the user settles (see `_contest`)."""
    from agentenv.plugins.first_party import FIRST_PARTY
    from agentenv.plugins.requirements import canonical  # packaging: not on the start path

    if canonical(one.dist) in {r.name for r in other.requirements()}:
        return True
    if canonical(other.dist) in {r.name for r in one.requirements()}:
        return False
    return canonical(one.dist) in FIRST_PARTY and canonical(other.dist) not in FIRST_PARTY


def why_kept(keep: PluginInfo, lose: PluginInfo) -> str:
    from agentenv.plugins.requirements import canonical

    builds_on = canonical(keep.dist) in {r.name for r in lose.requirements()}
    return f"{lose.dist} requires {keep.dist}" if builds_on else f"{keep.dist} is first-party"


class _Manager(pluggy.PluginManager):  # pluggy looks at every name in a plugin: a module's hooks are marked ones
    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        skip = isinstance(plugin, types.ModuleType) and not hasattr(vars(plugin).get(name), f"{hookspecs.PROJECT}_impl")
        return None if skip else super().parse_hookimpl_opts(plugin, name)


class PluginHost:
    """The kernel's view of installed plugins. Create one per process (see `get_host`); `given` maps plugin names
    to the objects to use instead of importing their modules (`agentenv_testing.hosts.host_of` builds such a host)."""

    def __init__(self, environ: Mapping[str, str] | None = None, infos: list[PluginInfo] | None = None, *,
                 given: Mapping[str, object] | None = None) -> None:  # fmt: skip
        self.environ = os.environ if environ is None else environ
        self.infos = discover(self.environ) if infos is None else infos
        self.pm = _Manager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs.AgentenvSpecs)
        self._given = dict(given or {})
        self._modules: dict[tuple[str, str], object] = {}  # (plugin, distribution): two may share a plugin name
        self._contested: dict[tuple[str, str], list[PluginInfo]] = {}  # (kind, name) -> claimants skipped on a tie
        self._imported = False
        self._loaded_kinds: set[str] = set()
        self.registries: dict[str, dict[str, Entry[Any]]] = {kind.name: {} for kind in kinds.ALL}
        for info in self.infos:
            if info.status == "ok":
                found = info.requirement_problems
                if found is None:  # not from discovery (tests hand infos in): check now
                    from agentenv.plugins.compat import requirement_problems

                    found = requirement_problems(info)
                info.problems.extend(found)
                if info.problems:
                    info.status = "incompatible"

    # ---- loading -----------------------------------------------------------------------------------
    def load(self, wanted: Iterable[Kind[Any]] | None = None) -> PluginHost:
        """Import compatible plugins (once) and fill the registries of `wanted` kinds (default: all)."""
        names = {kind.name for kind in (kinds.ALL if wanted is None else wanted)} - self._loaded_kinds
        if not self._imported:
            self._imported = True
            for info in self.active():
                self._import(info)
        for name in sorted(names):
            self._collect(kinds.BY_NAME[name])
            self._loaded_kinds.add(name)
        return self

    def active(self) -> list[PluginInfo]:
        return [info for info in self.infos if info.status == "ok"]

    def _fail(self, info: PluginInfo, status: str, problem: Problem) -> None:
        info.status = status
        info.problems.append(problem)
        module = self._modules.get((info.name, info.dist))  # kept: a failed plugin's other hooks are still checked
        if module is not None and self.pm.is_registered(module):
            self.pm.unregister(module)
        for registry in self.registries.values():
            for key in [k for k, entry in registry.items() if entry.plugin == info.name]:
                del registry[key]
        info.contributes.clear()

    def _refuse(self, info: PluginInfo, status: str, code: str, message: str, fix: str) -> None:
        self._fail(info, status, Problem(info.name, code, message, fix))

    def _import(self, info: PluginInfo) -> None:
        disable = f"or disable it: {DENY_VAR}={info.name}"
        holder = next((i for i in self.active() if (i.name, i.dist) in self._modules and i.name == info.name), None)
        if not self._claim(("plugin", info.name), "entry point", f"plugin name {info.name!r}", info, holder):
            return
        try:
            module = self._given.get(info.name) or importlib.import_module(info.module)
        except Exception as exc:  # any error in third-party code must not take the CLI down
            failure = f"importing {info.module} ({info.dist} {info.version}) failed: {type(exc).__name__}: {exc}"
            fix = import_fix(exc, info.dist, info.module, "its entry point") or f"fix {info.module}"
            return self._refuse(info, "failed", codes.IMPORT_FAILED, failure, f"{fix}, {disable}")
        self._modules[info.name, info.dist] = module
        for failure, hint in self._hook_problems(module):  # every one; its hooks are still checked (`_collect`)
            self._refuse(info, "failed", codes.INVALID_HOOK, failure, f"{hint}, {disable}")
        try:
            if info.status == "ok":
                self.pm.register(module, name=info.name)
        except pluggy.PluginValidationError as exc:
            failure = f"{info.module}: {' '.join(str(exc).split())}"
            fix = f"match the hook's arguments in agentenv.hookspecs, {disable}"
            self._refuse(info, "failed", codes.INVALID_HOOK, failure, fix)
            del self._modules[info.name, info.dist]  # its hooks cannot be called

    @staticmethod
    def _hook_problems(plugin: object) -> list[tuple[str, str]]:
        """Functions that look like hooks but name none (a typo would otherwise be silently ignored)."""
        module = isinstance(plugin, types.ModuleType)  # of another object only what is named like a hook is read
        names = vars(plugin) if module else [attr for attr in dir(plugin) if attr.startswith("agentenv_")]
        members = {attr: getattr(plugin, attr) for attr in names}
        label = getattr(plugin, "__name__", None) or type(plugin).__name__
        found = []
        for attr, value in members.items():
            opts = getattr(value, f"{hookspecs.PROJECT}_impl", None) if callable(value) else None
            if not callable(value) or (opts is None and not attr.startswith("agentenv_")):
                continue
            spec_name = (opts or {}).get("specname") or attr
            if spec_name not in SPEC_NAMES:
                import difflib

                close = difflib.get_close_matches(spec_name, SPEC_NAMES, n=1)
                hint = f"rename it to {close[0]}" if close else "rename it to a hook of agentenv.hookspecs"
                found.append((f"{label}.{attr} is not a hook of agentenv.hookspecs", hint))
        return found

    def _collect(self, kind: Kind[Any]) -> None:
        caller = getattr(self.pm.hook, kind.hook)
        registry = self.registries[kind.name]
        for info in self.infos:  # a failed plugin's hooks too: `plugin check` reports all its problems at once
            module = self._modules.get((info.name, info.dist))
            if module is None or info.status not in ("ok", "failed"):
                continue
            hooks = [i.function for i in caller.get_hookimpls() if i.plugin is module] if info.status == "ok" else [
                f for f in [getattr(module, kind.hook, None)] if callable(f)]  # fmt: skip
            for hook in hooks:
                disable, failure = f"or disable it: {DENY_VAR}={info.name}", f"{kind.hook} of {info.dist} "
                try:
                    items = hook() or []
                except Exception as exc:
                    self._refuse(info, "failed", codes.HOOK_FAILED, f"{failure}raised {type(exc).__name__}: {exc}",
                                 f"fix {kind.hook} in {info.dist}, {disable}")  # fmt: skip
                    break
                if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
                    self._refuse(info, "failed", codes.INVALID_HOOK, f"{failure}returned {type(items).__name__}, not a"
                                 " list", f"return a list of contributions from {kind.hook}, {disable}")  # fmt: skip
                    break
                if not self._register_items(info, kind, list(items), registry):
                    break

    def _register_items(
        self, info: PluginInfo, kind: Kind[Any], items: list[Any], registry: dict[str, Entry[Any]]
    ) -> bool:
        from agentenv.plugins.validate import validate_contribution  # imports base classes lazily

        checked = [(item, *validate_contribution(kind, item)) for item in items]
        for problem in [problem for _, _, problem in checked if problem]:  # every one, then nothing registers
            fix = f"fix or upgrade {info.dist}, or disable it: {DENY_VAR}={info.name}"
            self._refuse(info, "failed", codes.INVALID_CONTRIBUTION, f"{info.dist}: {problem}", fix)
        if info.status != "ok":
            return False
        staged: list[Entry[Any]] = []
        for item, key, _ in checked:
            target = item.target if isinstance(item, ClassRef) else ""
            taken = registry.get(key) or next((e for e in staged if e.name == key), None)
            if taken is not None and taken.plugin != info.name and taken.target:
                with contextlib.suppress(ContributionError):  # a ref that cannot load claims no name
                    taken.obj  # noqa: B018 - reading it imports and validates the class
                taken = None if taken._error is not None else taken
            if taken is not None and taken.plugin == info.name:
                fix = f"register {kind.label} {key!r} once in {info.dist}, or disable it: {DENY_VAR}={info.name}"
                self._refuse(info, "skipped", codes.DUPLICATE_NAME, f"{info.dist} registers {key!r} twice", fix)
                return False
            holder = None if taken is None else next(i for i in self.active() if i.name == taken.plugin)
            if not self._claim((kind.name, key), kind.label, f"{kind.label} {key!r}", info, holder):
                return False
            obj = None if target else item
            staged.append(Entry(key, obj, info.name, info.dist, target=target, kind=kind, info=info))
        for entry in staged:
            registry[entry.name] = entry
        info.contributes.setdefault(kind.name, []).extend(e.name for e in staged)
        return True

    def _claim(self, slot: tuple[str, str], what: str, label: str, info: PluginInfo, holder: PluginInfo | None) -> bool:
        """Whether `info` may have the name `slot` that `holder` (and maybe claimants of an earlier tie) has too.

        One plugin outranking every other (see `outranks`) keeps it and the others are skipped; otherwise nobody
        gets it: every claimant is skipped until the user disables all but one, so the outcome never depends on
        the order plugins load in (which is alphabetical)."""
        rivals = ([holder] if holder else []) + self._contested.get(slot, [])
        if all(outranks(info, rival) for rival in rivals):
            for rival in (r for r in rivals if r.status == "ok"):
                self._lose(rival, info, what, label)
            return True
        if holder is not None and not self._contested.get(slot) and outranks(holder, info):
            self._lose(info, holder, what, label)
            return False
        claimants = self._contested[slot] = [*rivals, info]
        dists = " and ".join(c.dist for c in claimants)
        message = f"{label} is registered by {dists}: none is first-party or required by the others; all skipped"
        for claimant in (c for c in claimants if c.status == "ok"):
            others = ",".join(c.name for c in claimants if c is not claimant)
            fix = f"choose one: {DENY_VAR}={others} keeps {claimant.dist}'s; or rename the {what} in all but one"
            self._refuse(claimant, "skipped", codes.DUPLICATE_NAME, message, fix)
        return False

    def _lose(self, lose: PluginInfo, keep: PluginInfo, what: str, label: str) -> None:
        why = why_kept(keep, lose)
        message = f"{label} is registered by {keep.dist} and {lose.dist}; {lose.name} was skipped ({why})"
        fix = f"rename the {what} in {lose.dist}, or disable it: {DENY_VAR}={lose.name}"
        self._refuse(lose, "skipped", codes.DUPLICATE_NAME, message, f"{fix} (to use {lose.dist}'s instead: "
                     f"{DENY_VAR}={keep.name})")  # fmt: skip

    # ---- access ------------------------------------------------------------------------------------
    def registry(self, kind: Kind[T]) -> dict[str, Entry[T]]:
        """Every contribution of `kind` by name (classes registered by `ClassRef` not imported yet)."""
        self.load([kind])
        return cast("dict[str, Entry[T]]", self.registries[kind.name])

    def get(self, kind: Kind[T], name: str) -> T:
        """The contribution `name` of `kind`, or a LookupError listing what is installed."""
        registry = self.registry(kind)
        if name in registry:
            return registry[name].obj
        known = ", ".join(sorted(registry)) or "none installed"
        raise LookupError(f"no {kind.label} named {name!r} (installed: {known}); see `agentenv plugin list`")

    def usable(self, kind: Kind[T]) -> dict[str, Entry[T]]:
        """The registry of `kind` with every class imported; broken ones are left out and recorded as problems."""
        usable: dict[str, Entry[T]] = {}
        for name, entry in self.registry(kind).items():
            try:
                entry.obj  # noqa: B018 - reading it imports and validates the class
            except ContributionError:
                continue
            usable[name] = entry
        return usable

    def resolve_all(self) -> PluginHost:
        """Import every contribution registered by name, so broken ones show up as plugin problems now."""
        for kind in kinds.ALL:
            self.usable(kind)
        return self

    def problems(self) -> list[Problem]:
        return [problem for info in self.infos for problem in info.problems]

    def install_problems(self, without: str | None = None) -> list[Problem]:
        """What `agentenv_check_install` implementers find (see the hook); plugin modules only are loaded."""
        return [p for found in self.load([]).pm.hook.agentenv_check_install(without=without) for p in found]

    def command_hints(self) -> dict[str, str]:
        return {name: dist for found in self.load([]).pm.hook.agentenv_command_hints() for name, dist in found.items()}

    def find(self, name: str) -> PluginInfo | None:
        return next((i for i in self.infos if name in (i.name, i.dist)), None)

    def observes(self, hook: str) -> bool:
        """Whether any loaded plugin implements the observer hook (so callers skip building its payload)."""
        self.load([])  # plugin modules only: no registry is filled for this
        return bool(getattr(self.pm.hook, f"agentenv_{hook}").get_hookimpls())

    def notify(self, hook: str, **kwargs: Any) -> None:
        """Call an observer hook (`run_started`, …) on every loaded plugin that implements it."""
        if self.observes(hook):
            getattr(self.pm.hook, f"agentenv_{hook}")(**kwargs)


_HOST: PluginHost | None = None


def get_host() -> PluginHost:
    """The process-wide host (discovery runs once)."""
    global _HOST
    if _HOST is None:
        _HOST = PluginHost()
        config.plugin_layers = functools.partial(_HOST.notify, "config_layer")
    return _HOST


def reset_host() -> None:
    """Forget the process-wide host (tests that install or disable plugins)."""
    global _HOST
    _HOST = config.plugin_layers = None
