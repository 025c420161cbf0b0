"""Secrets from environment variables, then from a private TOML file.

`secret:OPENAI_API_KEY` in the config resolves to `$AGENTENV_SECRET_OPENAI_API_KEY` when set, else to
`OPENAI_API_KEY = "..."` in `.agentenv/secrets.toml`. The file is refused when group or others may
read it: a secret on a shared machine should not be one `cat` away.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from agentenv.contracts import SecretStore
from pydantic import BaseModel, ConfigDict, Field

from agentenv_store_local._files import StoreFileError, resolve_path, setting_hint, typed_settings

_KEY = re.compile(r"[A-Z0-9_]+")


class EnvSecretSettings(BaseModel):
    """Settings of the `env` secret store."""

    model_config = ConfigDict(extra="forbid")

    prefix: str = Field("AGENTENV_SECRET_", description="Prefix of the environment variables read first.")
    file: str | None = Field(
        ".agentenv/secrets.toml",
        description='TOML file of key = "value" read second; None or "" for environment only.',
    )


def normalize_key(key: str) -> str:
    """`openai-api.key` → `OPENAI_API_KEY`: the form used in environment variable names."""
    if not isinstance(key, str):
        raise TypeError(f"secret key must be a string, got {type(key).__name__}")
    norm = key.upper().replace("-", "_").replace(".", "_")
    if not _KEY.fullmatch(norm):
        raise ValueError(
            f"invalid secret key {key!r}: use ASCII letters, digits, '_', '-' or '.', such as 'OPENAI_API_KEY'"
        )
    return norm


def _normalized_or_none(name: str) -> str | None:
    try:
        return normalize_key(name)
    except ValueError:
        return None


class EnvSecretStore(SecretStore):
    """Resolves `secret:KEY` from `$<prefix>KEY`, then from the secrets file."""

    name = "env"
    description = "Secrets from AGENTENV_SECRET_* environment variables, then a chmod-600 TOML file."
    Settings = EnvSecretSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        cfg = typed_settings(self.settings, EnvSecretSettings)
        self.prefix: str = cfg.prefix
        self.file: Path | None = resolve_path(cfg.file) if cfg.file else None

    def env_var(self, key: str) -> str:
        """The environment variable consulted first for `key`."""
        return self.prefix + normalize_key(key)

    def get(self, key: str) -> str | None:
        norm = normalize_key(key)
        value = os.environ.get(self.prefix + norm)
        if value is not None:
            return value
        if self.file is None:
            return None
        table = self._read_file(self.file)
        if key in table:
            return table[key]
        found = {name: v for name, v in table.items() if _normalized_or_none(name) == norm}
        if len(set(found.values())) > 1:
            names = ", ".join(sorted(found))
            raise StoreFileError(
                f"secrets file {self.file} has several different values for secret {key!r} ({names}); "
                "keep only one of these keys"
            )
        return next(iter(found.values()), None)

    def _read_file(self, path: Path) -> dict[str, str]:
        """The file's flat table, read afresh each time so edits apply without a restart."""
        hint = setting_hint("secret", "file")
        try:
            handle = path.open("rb")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise StoreFileError(f"cannot read secrets file {path} ({exc}); fix it or change {hint}") from exc
        with handle:
            info = os.fstat(handle.fileno())  # checks the file actually opened, not a swapped path
            if not stat.S_ISREG(info.st_mode):
                raise StoreFileError(f"secrets file {path} is not a regular file; fix it or change {hint}")
            if os.name == "posix" and info.st_mode & 0o077:
                raise StoreFileError(
                    f"secrets file {path} can be accessed by group or others "
                    f"(mode {stat.S_IMODE(info.st_mode):o}); run `chmod 600 {path}` so only you can read it"
                )
            raw = handle.read()
        try:
            table = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise StoreFileError(f"secrets file {path} is not valid UTF-8 TOML: {exc}") from exc
        for name, value in table.items():
            if not isinstance(value, str):
                raise StoreFileError(
                    f'secrets file {path}: {name!r} must be a string; the file is a flat table of key = "value" lines'
                )
        return table
