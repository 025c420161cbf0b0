"""Entry module of `agentenv-ray`: the `ray` rollout runner (`agentenv run -k N --runner ray`). Ray itself is
imported only when a run uses the runner."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_runners() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("ray", "agentenv_ray.runner:RayRunner")]
