"""Secret Manager secret store: `secret:KEY` resolves to the latest version of the secret `<prefix>KEY`."""

from __future__ import annotations

import re
from typing import Any

from agentenv.contracts import SecretStore
from pydantic import BaseModel, Field

from agentenv_gcp._client import GcpSettings, explain

_ID = re.compile(r"[A-Za-z0-9_-]{1,255}")


class SecretManagerSettings(GcpSettings):
    """Settings of the `secretmanager` secret store."""

    project: str = Field(..., min_length=1, description="Project holding the secrets.")
    prefix: str = Field("agentenv_", description="Put before every key to make the secret id.")
    version: str = Field("latest", description="Version read: 'latest' or a version number.")


class SecretManagerStore(SecretStore[SecretManagerSettings]):
    """Resolves `secret:KEY` from Google Secret Manager (the version's payload, as UTF-8 text)."""

    name = "secretmanager"
    description = "Secrets from Google Secret Manager, named <prefix><KEY>."
    Settings = SecretManagerSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        from google.cloud import secretmanager

        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        endpoint = self.config.endpoint_url
        try:
            self._client = secretmanager.SecretManagerServiceClient(
                credentials=self.config.credentials(),
                transport="rest" if endpoint else None,
                client_options={"api_endpoint": endpoint} if endpoint else None,
            )
        except Exception as exc:
            raise explain(exc, "Secret Manager client", "secret", "project") from exc

    def secret_id(self, key: str) -> str:
        """The Secret Manager id of `key`; ValueError when Secret Manager cannot hold it."""
        if not isinstance(key, str):
            raise TypeError(f"secret key must be a string, got {type(key).__name__}")
        secret = self.config.prefix + key
        if not key or not _ID.fullmatch(secret):
            raise ValueError(
                f"invalid secret key {key!r}: Secret Manager ids use letters, digits, '_' and '-' "
                "(up to 255), such as 'OPENAI_API_KEY'"
            )
        return secret

    def get(self, key: str) -> str | None:
        from google.api_core.exceptions import NotFound

        name = f"projects/{self.config.project}/secrets/{self.secret_id(key)}/versions/{self.config.version}"
        try:
            found = self._client.access_secret_version(
                name=name, retry=self.config.retry(), timeout=self.config.timeout_seconds
            )
        except NotFound:
            return None
        except Exception as exc:
            raise explain(exc, f"Secret Manager secret {name!r}", "secret", "prefix") from exc
        value: str = found.payload.data.decode("utf-8")
        return value
