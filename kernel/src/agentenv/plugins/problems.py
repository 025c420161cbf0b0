"""A plugin problem: what `agentenv plugin check` reports, one fix per problem."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# Codes, stable for scripts that read `plugin check --json`.
KERNEL_RANGE = "kernel-range"
NO_KERNEL_RANGE = "no-kernel-range"
REQUIREMENT_RANGE = "requirement-range"
MISSING_REQUIREMENT = "missing-requirement"
IMPORT_FAILED = "import-failed"
INVALID_HOOK = "invalid-hook"
DUPLICATE_NAME = "duplicate-name"
INVALID_CONTRIBUTION = "invalid-contribution"
HOOK_FAILED = "hook-failed"


@dataclass(frozen=True)
class Problem:
    plugin: str
    code: str
    message: str
    fix: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
