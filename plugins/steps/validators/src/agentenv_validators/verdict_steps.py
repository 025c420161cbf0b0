"""Validator steps that turn other steps' outputs into verdicts: 32 (an agent's self-assessment of each
tool), 33 (the release gate over several validators) and 37 (round trip + judge in one record)."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field

from agentenv_validators.client import ProbeError
from agentenv_validators.results import Row, failures, row, verdict
from agentenv_validators.target import TargetSettings, open_target, target_problems


def _missing(field: str, step_id: str, step_ids: list[str], what: str) -> list[tuple[str, str]]:
    if step_id in step_ids:
        return []
    return [(field, f"no step {step_id!r} in this task; name the {what} step (steps: {', '.join(step_ids)})")]


def _verifier_output(ctx: StepContext, step_id: str, field: str) -> dict[str, Any] | None:
    """An earlier verifier's output (None when it failed or did not run); StepFailed when it is no verifier."""
    output = ctx.outputs.get(step_id)
    if output is None:
        return None
    if not isinstance(output.get("score"), int | float) or not isinstance(output.get("rows"), list):
        raise StepFailed(
            f"field `{field}`: step {step_id!r} is not a verifier (no score and rows); name a verifier step"
        )
    return output


def _passed(output: dict[str, Any]) -> bool:
    return bool(output.get("passed", all(r.get("passed") for r in output["rows"])))


def _failed_names(output: dict[str, Any]) -> str:
    names = [str(r.get("criterion")) for r in output["rows"] if not r.get("passed") and r.get("weight", 1) > 0]
    return ", ".join(names[:5]) + (f" (+{len(names) - 5} more)" if len(names) > 5 else "")


# ---- 32 -------------------------------------------------------------------------------------------
class AssessmentSettings(TargetSettings):
    prompt_step: str = Field(description="Id of the prompt_agent step whose structured output is the assessment.")
    field: str = Field(
        "structured",
        description="Dotted path of the assessment in that step's output ({tool: {works, note}}); a JSON string "
        "there is parsed.",
    )
    tools: list[str] = Field(
        default_factory=list,
        description="Tools that must be assessed (default: the tools of `env`/`url` when given, else those assessed).",
    )


class VerifyMcpEnvAssessment(Step[AssessmentSettings]):
    """Turn an agent's self-assessment `{tool: {"works": bool, "note": str}}` into a verdict per tool."""

    name = "verify_mcp_env_assessment"
    description = "Turn an agent's self-assessment of each tool ({tool: {works, note}}) into a per-tool verdict."
    Settings = AssessmentSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: AssessmentSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = _missing("prompt_step", settings.prompt_step, step_ids, "prompt_agent")
        if settings.tools and (settings.env or settings.url):
            problems.append(("tools", "give either `tools` or a world (`env`/`url`) to take the tool list from"))
        return problems + target_problems(settings, step_ids, required=False)

    async def execute(self, settings: AssessmentSettings, ctx: StepContext) -> dict[str, Any]:
        output = ctx.outputs.get(settings.prompt_step)
        if output is None:
            raise StepFailed(
                f"field `prompt_step`: step {settings.prompt_step!r} produced no output (it failed or did not run)"
            )
        assessment = _assessment(output, settings.field, settings.prompt_step)
        expected = list(settings.tools)
        if settings.env is not None:
            try:
                world = ctx.resource(settings.env, World)
            except StepFailed as exc:
                raise StepFailed(f"field `env`: {exc}") from None
            expected = [t["name"] for t in world.list_tools()]
        elif settings.url is not None:
            with open_target(settings, ctx) as target:
                try:
                    expected = [str(t["name"]) for t in await target.client.mcp_tools()]
                except ProbeError as exc:
                    raise StepFailed(f"field `url`: {exc}") from None
        return verdict(assessment_rows(assessment, expected), assessed=len(assessment))


def _assessment(output: dict[str, Any], path: str, step_id: str) -> dict[str, Any]:
    value: Any = output
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise StepFailed(f"field `field`: step {step_id!r} output has no {path!r} (keys: {', '.join(output)})")
        value = value[part]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise StepFailed(f"field `field`: {step_id}.{path} is text, not a JSON assessment") from None
    if isinstance(value, dict) and set(value) == {"tools"} and isinstance(value["tools"], dict):
        value = value["tools"]
    if not isinstance(value, dict) or not value:
        raise StepFailed(
            f"field `field`: {step_id}.{path} is not an assessment; ask the agent for "
            '{"<tool>": {"works": true|false, "note": "..."}} as structured output'
        )
    return value


def assessment_rows(assessment: dict[str, Any], expected: list[str]) -> list[Row]:
    """One row per tool: passed when the agent says it works; not assessed or malformed is a failure."""
    rows = []
    for tool in expected or list(assessment):
        entry = assessment.get(tool)
        if entry is None:
            rows.append(row(f"tool {tool}", False, "not assessed"))
        elif not isinstance(entry, dict) or not isinstance(entry.get("works"), bool):
            rows.append(row(f"tool {tool}", False, f"the assessment has no boolean `works`: {entry!r}"))
        else:
            note = str(entry.get("note") or "")
            rows.append(row(f"tool {tool}", entry["works"], note or ("works" if entry["works"] else "does not work")))
    for tool in assessment:
        if expected and tool not in expected:
            rows.append(row(f"tool {tool}", False, "assessed, but the world has no such tool"))
    return rows


# ---- 33 -------------------------------------------------------------------------------------------
class GateEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Id of a validator (verifier) step.")
    required: bool = Field(True, description="A required verdict closes the gate when it failed or is missing.")


class GateSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    validators: list[str | GateEntry] = Field(
        description="Validator step ids (a plain id is required) or {id, required}; optional ones are reported only."
    )


class ValidationGateAggregator(Step[GateSettings]):
    """One release gate from several validators: open only when every required one ran and passed."""

    name = "validation_gate_aggregator"
    description = (
        "Roll required validator verdicts into one gate; fail closed when a required one failed or is missing."
    )
    Settings = GateSettings
    verifier: ClassVar[bool] = True

    @staticmethod
    def entries(settings: GateSettings) -> list[GateEntry]:
        return [GateEntry(id=e) if isinstance(e, str) else e for e in settings.validators]

    def preflight(self, settings: GateSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        entries = self.entries(settings)
        problems: list[tuple[str, str]] = []
        if not entries:
            problems.append(("validators", "the list is empty; name the validator steps the gate needs"))
        elif not any(e.required for e in entries):
            problems.append(("validators", "no validator is required, so the gate would always open; require one"))
        ids = [e.id for e in entries]
        for dup in sorted({i for i in ids if ids.count(i) > 1}):
            problems.append(("validators", f"{dup!r} is listed twice"))
        for entry in entries:
            problems += _missing("validators", entry.id, step_ids, "validator")
        return problems

    async def execute(self, settings: GateSettings, ctx: StepContext) -> dict[str, Any]:
        rows: list[Row] = []
        summary: dict[str, dict[str, Any]] = {}
        for entry in self.entries(settings):
            output = _verifier_output(ctx, entry.id, "validators")
            weight = 1.0 if entry.required else 0.0
            kind = "required" if entry.required else "optional"
            if output is None:
                summary[entry.id] = {"required": entry.required, "passed": False, "missing": True}
                rows.append(row(entry.id, False, f"{kind}: no verdict (the step failed or did not run)", weight=weight))
                continue
            passed = _passed(output)
            summary[entry.id] = {"required": entry.required, "passed": passed, "score": float(output["score"])}
            detail = f"{kind}: passed" if passed else f"{kind}: failed ({_failed_names(output)})"
            rows.append(row(entry.id, passed, detail, weight=weight))
        result = verdict(rows, validators=summary)
        result["score"] = 1.0 if result["passed"] else 0.0
        result["gate"] = "open" if result["passed"] else "closed"
        result["blocking"] = [r["criterion"] for r in failures(rows)]
        return result


# ---- 37 -------------------------------------------------------------------------------------------
class CombineSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roundtrip: str = Field(description="Id of the verify_universe_load_export_roundtrip step (or any verifier).")
    judge: str = Field(description="Id of the judge's verifier step (a rubrics_verifier, say).")
    method: Literal["all_pass", "weighted_average"] = Field(
        "all_pass", description="all_pass: both must pass (score 1 or 0); weighted_average: mean of the two scores."
    )
    weights: dict[Literal["roundtrip", "judge"], float] = Field(
        default_factory=dict, description="Weights of `roundtrip` and `judge` for weighted_average (default 1 each)."
    )
    threshold: float = Field(
        1.0, ge=0, le=1, description="weighted_average passes when the score reaches this and neither is missing."
    )


class CombineUniverseVerdicts(Step[CombineSettings]):
    """One record from the round-trip verdict and a judge's verdict; a missing one fails the record."""

    name = "combine_universe_verdicts"
    description = "Merge the round-trip verdict with a judge's verdict into one record (fails closed on a missing one)."
    Settings = CombineSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: CombineSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = _missing("roundtrip", settings.roundtrip, step_ids, "round-trip validator")
        problems += _missing("judge", settings.judge, step_ids, "judge verifier")
        if settings.roundtrip == settings.judge:
            problems.append(("judge", "the judge and the round trip are the same step; name two verifiers"))
        if any(w < 0 for w in settings.weights.values()) or (settings.weights and sum(settings.weights.values()) <= 0):
            problems.append(("weights", "weights must be 0 or more and not all 0"))
        return problems

    async def execute(self, settings: CombineSettings, ctx: StepContext) -> dict[str, Any]:
        rows: list[Row] = []
        parts: dict[str, dict[str, Any]] = {}
        top: dict[str, Row] = {}
        weights: dict[str, float] = {str(key): float(value) for key, value in settings.weights.items()}
        for key, step_id in (("roundtrip", settings.roundtrip), ("judge", settings.judge)):
            output = _verifier_output(ctx, step_id, key)
            weight = weights.get(key, 1.0)
            if output is None:
                parts[key] = {"step": step_id, "passed": False, "score": 0.0, "missing": True}
                top[key] = row(
                    key, False, f"step {step_id!r} gave no verdict (it failed or did not run)", weight=weight
                )
                rows.append(top[key])
                continue
            passed = _passed(output)
            parts[key] = {"step": step_id, "passed": passed, "score": float(output["score"])}
            top[key] = row(key, passed, "passed" if passed else f"failed ({_failed_names(output)})", weight=weight)
            top[key]["score"] = float(output["score"])
            rows.append(top[key])
            rows += [{**r, "criterion": f"{key}/{r.get('criterion')}", "weight": 0.0} for r in output["rows"]]
        missing = any(p.get("missing") for p in parts.values())
        if settings.method == "all_pass":
            passed = all(p["passed"] for p in parts.values())
            score = 1.0 if passed else 0.0
        else:
            total = sum(weights.get(k, 1.0) for k in parts)
            score = sum(float(p["score"]) * weights.get(k, 1.0) for k, p in parts.items()) / total
            passed = not missing and score >= settings.threshold
        reasons = [f"{key}: {top[key]['detail']}" for key in top if not parts[key]["passed"]]
        return {
            "score": score,
            "passed": passed,
            "rows": rows,
            "method": settings.method,
            "roundtrip": parts["roundtrip"],
            "judge": parts["judge"],
            "verdict": "pass" if passed else "fail",
            "reasons": reasons,
        }
