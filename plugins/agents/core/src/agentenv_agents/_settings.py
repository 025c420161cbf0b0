"""Agent kinds accept their `Settings` model or a plain mapping (handy in tests and notebooks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def coerce_settings(model: type[M], settings: BaseModel | Mapping[str, Any] | None) -> M:
    """`settings` as an instance of `model`, validated (unknown keys are refused by the model)."""
    if isinstance(settings, model):
        return settings
    raw = settings.model_dump() if isinstance(settings, BaseModel) else dict(settings or {})
    return model.model_validate(raw)
