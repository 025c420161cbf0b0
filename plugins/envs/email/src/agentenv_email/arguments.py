"""Argument types of the email tools, so bad input is refused by the schema before a tool runs."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

ADDRESS_RE = re.compile(r"[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}")
MAX_RECIPIENTS = 50
MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024
SYSTEM_LABELS = ("inbox", "sent", "archive")


def _check_address(value: str) -> str:
    if not ADDRESS_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not an email address; write it as name@domain.tld")
    return value


Address = Annotated[
    str,
    StringConstraints(strip_whitespace=True, to_lower=True, min_length=3, max_length=254),
    AfterValidator(_check_address),
    Field(json_schema_extra={"format": "email"}),
]
"""An email address, compared case-insensitively (stored lower-case)."""

AddressList = Annotated[list[Address], Field(min_length=1, max_length=MAX_RECIPIENTS)]
OptionalAddressList = Annotated[list[Address], Field(max_length=MAX_RECIPIENTS)]

EmailId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^M-\d+$")]
ThreadId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^TH-\d+$")]

LabelName = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, to_lower=True, min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _/-]*$"
    ),
]
"""A label: lower-case letters, digits, spaces, `_`, `-`, `/`; inbox, sent and archive are system labels."""

Limit = Annotated[int, Field(ge=1, le=100)]
Offset = Annotated[int, Field(ge=0)]
Subject = Annotated[str, StringConstraints(max_length=300)]
Body = Annotated[str, StringConstraints(max_length=100_000)]


class AttachmentMeta(BaseModel):
    """An attachment as metadata only: the simulation never carries file contents."""

    model_config = ConfigDict(extra="forbid")

    filename: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255, pattern=r"^[^/\\]+$")
    ] = Field(description="File name without folders, e.g. 'invoice.pdf'.")
    mime_type: Annotated[
        str, StringConstraints(strip_whitespace=True, to_lower=True, pattern=r"^[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+$")
    ] = Field(description="MIME type, e.g. 'application/pdf'.")
    size_bytes: Annotated[int, Field(ge=0)] = Field(description="Size in bytes.")


Attachments = Annotated[list[AttachmentMeta], Field(max_length=20)]
