"""Reading a requirement string cheaply.

`packaging.requirements` (with its marker machinery) costs more at start-up than all of `agentenv --help`
may spend, and nearly every plugin requirement is a plain `name>=x,<y`. Those are read with a regex and
`packaging.specifiers` (extras a plugin asks of its own dependencies do not change the check); anything with
markers or URLs goes to the full parser.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet

_PLAIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[\w\s,.-]*\])?\s*\(?\s*([<>=!~][^;\[\]@()]*)?\)?\s*$")


class Requirement(NamedTuple):
    name: str
    """Canonical (lower case, dashes)."""
    specifier: SpecifierSet
    applies: bool
    """False when a marker excludes it here (for example an extra that was not asked for)."""


class InvalidRequirement(ValueError):
    pass


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_EXTRA_ONLY = re.compile(r"""^(?P<req>[^;]*);\s*extra\s*==\s*["'][\w.-]+["']\s*$""")


def parse(raw: str) -> Requirement:
    extra = _EXTRA_ONLY.match(raw)  # `…; extra == "x"`: an optional extra's need, which never applies here
    if extra and _PLAIN.match(extra.group("req")):
        plain = parse(extra.group("req"))
        return Requirement(plain.name, plain.specifier, False)
    match = _PLAIN.match(raw)
    if match:
        try:
            return Requirement(canonical(match.group(1)), SpecifierSet(match.group(2) or ""), True)
        except InvalidSpecifier as exc:
            raise InvalidRequirement(str(exc)) from exc
    from packaging.requirements import InvalidRequirement as Invalid
    from packaging.requirements import Requirement as Full

    try:
        full = Full(raw)
    except Invalid as exc:
        raise InvalidRequirement(str(exc)) from exc
    applies = full.marker is None or full.marker.evaluate({"extra": ""})
    return Requirement(canonical(full.name), full.specifier, applies)
