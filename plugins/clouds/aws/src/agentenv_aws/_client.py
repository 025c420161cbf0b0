"""What every AWS backend shares: connection settings, the boto3 client and the error helpers.

Credentials come only from the usual AWS chain (environment, shared config and credentials files, SSO,
instance and container roles) or from `env:`/`secret:` references in the settings; never a literal key.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CONFIG_SECTION = "[plugins.agentenv-aws.{kind}]"


class AwsSettings(BaseModel):
    """Connection settings every AWS backend accepts."""

    model_config = ConfigDict(extra="forbid")

    region: str | None = Field(None, description="AWS region; default: the AWS chain (AWS_REGION, profile).")
    profile: str | None = Field(None, description="Named profile of the shared AWS config; default: the chain.")
    endpoint_url: str | None = Field(
        None, description="Service endpoint, such as a moto server or LocalStack; default: AWS itself."
    )
    access_key_id: str | None = Field(None, description="Only as an env:/secret: reference; default: the chain.")
    secret_access_key: str | None = Field(None, description="Only as an env:/secret: reference.")
    max_attempts: int = Field(8, ge=1, le=20, description="Attempts per call, with backoff on throttling and 5xx.")
    timeout_seconds: float = Field(60.0, gt=0, description="Connect and read timeout of one attempt.")


def client(settings: AwsSettings, service: str) -> Any:
    """A boto3 client for `service` with standard-mode retries (exponential backoff with jitter).

    Each store makes its own session: sessions are not thread-safe, the clients they make are.
    """
    import boto3
    from botocore.config import Config

    session = boto3.session.Session(
        profile_name=settings.profile,
        aws_access_key_id=settings.access_key_id,
        aws_secret_access_key=settings.secret_access_key,
        region_name=settings.region,
    )
    config = Config(
        retries={"mode": "standard", "max_attempts": settings.max_attempts},
        connect_timeout=settings.timeout_seconds,
        read_timeout=settings.timeout_seconds,
        max_pool_connections=32,
    )
    return session.client(service, endpoint_url=settings.endpoint_url, config=config)


def error_code(exc: BaseException) -> str:
    """The AWS error code of a botocore ClientError ('' for anything else)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


class AwsStoreError(RuntimeError):
    """An AWS call failed after its retries; the message names the resource, the setting and the fix."""


def explain(exc: BaseException, what: str, kind: str, setting: str) -> AwsStoreError:
    """A one-line error for a failed call on `what`, naming the setting that points at it."""
    code = error_code(exc) or type(exc).__name__
    return AwsStoreError(
        f"{what}: {code}: {exc}; check `{setting}` under {CONFIG_SECTION.format(kind=kind)} in "
        ".agentenv/config.toml and the AWS credentials and permissions"
    )
