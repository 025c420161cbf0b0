"""Generate `docs/hooks.md`, the hook reference, from the docstrings of `agentenv.hookspecs.AgentenvSpecs`.

    ./dev python docs/hook_reference.py          # rewrite docs/hooks.md
    ./dev python docs/hook_reference.py --check  # exit 1 when docs/hooks.md is stale or a hook is undocumented

`tests/test_author_guide.py` runs the check, so a new hook without a docstring (or a changed one) fails CI.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from agentenv import hookspecs

OUTPUT = Path(__file__).with_name("hooks.md")
HEADER = """# Hook reference

Generated from the docstrings of `agentenv.hookspecs` by `docs/hook_reference.py`; do not edit by hand. A plugin
module implements any of these with `@hookimpl` (from `agentenv.hookspecs`); pluggy calls them with keyword
arguments, and an implementation may take any subset of them. Registration hooks return a list; observer hooks
return nothing. The [author guide](authoring.md) explains what to register and how.
"""


def hooks() -> list[tuple[str, inspect.Signature, str]]:
    """(name, signature, docstring) of every hook specification, in the order they are declared."""
    found = []
    for name, value in vars(hookspecs.AgentenvSpecs).items():
        if name.startswith("agentenv_") and callable(value):
            found.append((name, inspect.signature(value), inspect.cleandoc(value.__doc__ or "")))
    return found


def undocumented() -> list[str]:
    return [name for name, _, doc in hooks() if not doc.strip()]


def render() -> str:
    parts = [HEADER]
    kinds: dict[str, list[str]] = {"Registration": [], "Observer": [], "Checks": []}
    for name, signature, doc in hooks():
        params = [p for p in signature.parameters.values() if p.name != "self"]
        args = ", ".join(f"{p.name}: {p.annotation}" for p in params)
        group = "Registration" if name.startswith("agentenv_register_") else "Checks" if "check" in name else "Observer"
        kinds[group].append(f"### `{name}({args}) -> {signature.return_annotation}`\n\n{doc or 'UNDOCUMENTED'}\n")
    for group, entries in kinds.items():
        if entries:
            parts.append(f"## {group} hooks\n")
            parts.extend(entries)
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        missing = undocumented()
        if missing:
            print(f"hooks without a docstring in agentenv/hookspecs.py: {', '.join(missing)}", file=sys.stderr)
            return 1
        if not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is stale: run ./dev python docs/hook_reference.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
