"""Conformance kit for step types: subclass `StepConformance`, name your step class and one valid set of its
task-file fields, and pytest runs the contract.

    from agentenv_testing.steps import StepConformance

    class TestPhoneCall(StepConformance):
        step_class = PhoneCall
        example = {"env": "world", "number": "+15550100"}

What every step type must do: be a valid contribution with a name and a pydantic `Settings` model; accept
the example; refuse an unknown field (so a typo in a task file fails preflight, not the run); publish a JSON
Schema for editors (`agentenv task schema`); and answer preflight with (field, message) pairs. Whether it
does its job inside a task is shown with `agentenv_testing.tasks.run_task` (or the `agentenv_runs` fixture).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from agentenv.contracts import Step, contribution_problem

from agentenv_testing._contract import refuses_unknown_fields


class StepConformance:
    step_class: ClassVar[type[Step[Any]]]
    example: ClassVar[dict[str, Any]] = {}

    def test_is_a_valid_step(self) -> None:
        assert contribution_problem(self.step_class, Step) is None
        assert self.step_class.description, f"step {self.step_class.name!r} has no description"

    def test_the_example_validates(self) -> None:
        self.step_class.Settings.model_validate(self.example)

    def test_unknown_fields_are_refused(self) -> None:
        refuses_unknown_fields(self.step_class.Settings, self.example, f"step {self.step_class.name!r}")

    def test_settings_publish_a_json_schema(self) -> None:
        schema = self.step_class.Settings.model_json_schema()
        assert schema.get("type") == "object"
        json.dumps(schema)

    def test_preflight_answers_field_message_pairs(self) -> None:
        settings = self.step_class.Settings.model_validate(self.example)
        problems = self.step_class().preflight(settings, ["world", "agent"])
        assert isinstance(problems, list)
        assert all(isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in problems)
