"""Secrets Manager secret store: `secret:KEY` resolves to the secret named `<prefix>KEY`."""

from __future__ import annotations

import re
from typing import Any

from agentenv.contracts import SecretStore
from pydantic import BaseModel, Field

from agentenv_aws._client import AwsSettings, client, error_code, explain

_NAME = re.compile(r"[A-Za-z0-9/_+=.@-]{1,512}")


class SecretsManagerSettings(AwsSettings):
    """Settings of the `secretsmanager` secret store."""

    prefix: str = Field("agentenv/", description="Put before every key to make the secret's name.")


class SecretsManagerStore(SecretStore[SecretsManagerSettings]):
    """Resolves `secret:KEY` from AWS Secrets Manager (the secret's string value)."""

    name = "secretsmanager"
    description = "Secrets from AWS Secrets Manager, named <prefix><KEY>."
    Settings = SecretsManagerSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        self._client = client(self.config, "secretsmanager")

    def secret_name(self, key: str) -> str:
        """The Secrets Manager name of `key`; ValueError when Secrets Manager cannot hold it."""
        if not isinstance(key, str):
            raise TypeError(f"secret key must be a string, got {type(key).__name__}")
        name = self.config.prefix + key
        if not key or not _NAME.fullmatch(name):
            raise ValueError(
                f"invalid secret key {key!r}: Secrets Manager names use letters, digits and /_+=.@- "
                "(up to 512), such as 'OPENAI_API_KEY'"
            )
        return name

    def get(self, key: str) -> str | None:
        name = self.secret_name(key)
        try:
            found = self._client.get_secret_value(SecretId=name)
        except Exception as exc:
            if error_code(exc) == "ResourceNotFoundException":
                return None
            raise explain(exc, f"Secrets Manager secret {name!r}", "secret", "prefix") from exc
        value = found.get("SecretString")
        return value if isinstance(value, str) else None
