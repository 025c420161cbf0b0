"""What every Google Cloud backend shares: connection settings, credentials, retries and error helpers.

Credentials come from Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, `gcloud auth
application-default login`, the metadata server) or, for emulators, none at all. Emulators are reached
the way Google's own clients do (FIRESTORE_EMULATOR_HOST, STORAGE_EMULATOR_HOST) or by `endpoint_url`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CONFIG_SECTION = "[plugins.agentenv-gcp.{kind}]"


class GcpSettings(BaseModel):
    """Connection settings every Google Cloud backend accepts."""

    model_config = ConfigDict(extra="forbid")

    project: str | None = Field(None, description="Project id; default: Application Default Credentials' project.")
    endpoint_url: str | None = Field(None, description="Service endpoint, such as an emulator or a stand-in.")
    anonymous: bool | None = Field(
        None, description="Send no credentials (emulators); default: true when endpoint_url is set."
    )
    retry_seconds: float = Field(
        120.0, gt=0, description="How long one call keeps retrying 429/5xx answers, with exponential backoff."
    )
    timeout_seconds: float = Field(60.0, gt=0, description="Timeout of one attempt.")

    def credentials(self) -> Any:
        """AnonymousCredentials for emulators; None lets the SDK find Application Default Credentials."""
        anonymous = self.anonymous if self.anonymous is not None else self.endpoint_url is not None
        if not anonymous:
            return None
        from google.auth.credentials import AnonymousCredentials

        return AnonymousCredentials()  # type: ignore[no-untyped-call]

    def retry(self) -> Any:
        """Retry throttling and server errors — HTTP 408/429/5xx or gRPC UNAVAILABLE/RESOURCE_EXHAUSTED/INTERNAL/
        DEADLINE_EXCEEDED — and dropped connections, with exponential backoff and jitter, for `retry_seconds`."""
        from google.api_core import exceptions
        from google.api_core.retry import Retry, if_exception_type, if_transient_error

        throttled = if_exception_type(exceptions.ResourceExhausted, exceptions.DeadlineExceeded, ConnectionError)
        return Retry(
            predicate=lambda exc: if_transient_error(exc) or throttled(exc) or _is_server_error(exc),
            initial=0.1,
            maximum=5.0,
            multiplier=2.0,
            timeout=self.retry_seconds,
        )


def _is_server_error(exc: BaseException) -> bool:
    from google.api_core.exceptions import GoogleAPICallError

    code = exc.code if isinstance(exc, GoogleAPICallError) else None
    return isinstance(code, int) and (code >= 500 or code in (408, 429))


class GcpStoreError(RuntimeError):
    """A Google Cloud call failed after its retries; the message names the resource, the setting and the fix."""


def explain(exc: BaseException, what: str, kind: str, setting: str) -> GcpStoreError:
    """A one-line error for a failed call on `what`, naming the setting that points at it."""
    detail = " ".join(str(exc).split())
    return GcpStoreError(
        f"{what}: {type(exc).__name__}: {detail}; check `{setting}` under {CONFIG_SECTION.format(kind=kind)} in "
        ".agentenv/config.toml and the Google Cloud credentials and permissions"
    )
