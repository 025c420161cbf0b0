"""Creating sandboxes through a fallback chain, and finding what crashed runs left behind.

`[sandbox] default = "docker,process"` names a chain: a provider that is not available here, or refuses
the spec, passes to the next one, and the caller learns which provider served and why the others did not.
"""

from __future__ import annotations

from collections.abc import Callable

from agentenv.config import Config
from agentenv.contracts import Registries, Sandbox, SandboxProvider, SandboxSpec, SpecRefused, kinds
from pydantic import ValidationError

RUN_LABEL = "agentenv.run"


class NoSandbox(RuntimeError):
    """No provider of the chain could create the sandbox; the message has every provider's reason."""


def make_provider(name: str, config: Config, host: Registries) -> SandboxProvider:
    """The provider `name`, made with its settings from `[plugins.<distribution>.<name>]`."""
    registry = host.registry(kinds.SANDBOX_PROVIDERS)
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none installed"
        raise LookupError(
            f"no sandbox provider {name!r} (installed: {known}); add the plugin that provides it "
            "(`agentenv sandbox list` shows what this install has)"
        )
    entry = registry[name]
    try:
        provider: SandboxProvider = entry.obj(config.plugin_settings(entry.dist).get(name) or {})
    except ValidationError as exc:
        raise LookupError(f"config [plugins.{entry.dist}.{name}]: {exc}") from exc
    return provider


def create_in_chain(
    chain: str, spec: SandboxSpec, config: Config, host: Registries, log: Callable[[str], None] = lambda _: None
) -> tuple[Sandbox, str, list[str]]:
    """(sandbox, provider that served, why each earlier provider passed)."""
    passed: list[str] = []
    for name in [part.strip() for part in chain.split(",") if part.strip()]:
        try:
            provider = make_provider(name, config, host)
        except LookupError as exc:
            passed.append(f"{name}: {exc}")
            continue
        usable, reason = provider.available()
        if not usable:
            passed.append(f"{name}: not available here: {reason}")
        elif spec.mode not in provider.modes:
            passed.append(f"{name}: makes {', '.join(sorted(provider.modes))} sandboxes, not {spec.mode}")
        else:
            try:
                return provider.create(spec), name, passed
            except SpecRefused as exc:
                passed.append(f"{name}: refused the spec: {exc}")
        log(f"sandbox provider {passed[-1]}; trying the next one")
    raise NoSandbox(f"no provider in {chain!r} could create the sandbox: " + "; ".join(passed))


def providers_here(config: Config, host: Registries) -> dict[str, SandboxProvider | str]:
    """Every installed provider, or the reason it cannot be used here."""
    found: dict[str, SandboxProvider | str] = {}
    for name in sorted(host.registry(kinds.SANDBOX_PROVIDERS)):
        try:
            provider = make_provider(name, config, host)
        except LookupError as exc:
            found[name] = str(exc)
            continue
        usable, reason = provider.available()
        found[name] = provider if usable else reason
    return found
