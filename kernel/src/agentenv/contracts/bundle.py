"""Bundle contributions: a bundle is a folder with a `bundle.toml`; plugins ship them in their package."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # an annotation only: importing pathlib would cost `agentenv --help` a tenth
    from pathlib import Path


@dataclass(frozen=True)
class BundleRef:
    """A named bundle folder. `path` is the folder that holds `bundle.toml`."""

    name: str
    path: Path
    description: str = ""
