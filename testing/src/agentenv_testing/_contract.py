"""Checks several kits share: what every contribution's settings model must do."""

from __future__ import annotations

from typing import Any

from agentenv.contracts import contribution_problem
from pydantic import BaseModel, ValidationError


def valid_contribution(cls: type, base: type, what: str) -> None:
    """`cls` registers as a `base` and describes itself (listings and cards show the description)."""
    assert contribution_problem(cls, base) is None, contribution_problem(cls, base)
    assert getattr(cls, "description", ""), f"{what} has no description"


def refuses_unknown_fields(model: type[BaseModel], example: dict[str, Any], what: str) -> None:
    """`example` validates and the same with one unknown field does not (a typo in a task file must fail early)."""
    model.model_validate(example)
    try:
        model.model_validate({**example, "no_such_field_in_any_contribution": 1})
    except ValidationError:
        return
    raise AssertionError(f"{what} accepts unknown fields; set model_config = ConfigDict(extra='forbid')")
