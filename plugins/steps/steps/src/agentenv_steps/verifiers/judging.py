"""What any rubric judge is asked and how its answer is read: the same for the LLM judge and an agent judge.

The request says how to answer (`pass_fail`: met true/false; `partial_credit`: a score from 0 to 1), whether
each verdict must quote its evidence, and whether to list the agent's mistakes; a grading policy and context
facts from the task come with it. Negative criteria are marked: "met" then means the agent made that mistake.
The answer is read strictly: exactly one verdict per asked criterion, each field of the right type, or the
step fails naming what was wrong. A judge that cannot answer never passes anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agentenv.contracts import StepFailed

OutputFormat = Literal["pass_fail", "partial_credit"]


@dataclass(frozen=True)
class Ask:
    """One criterion put to the judge."""

    name: str
    description: str
    negative: bool = False


@dataclass(frozen=True)
class JudgeBrief:
    """How the judge is to answer, and what the task tells it besides the evidence."""

    output: OutputFormat = "pass_fail"
    evidence: bool = False
    mistakes: bool = False
    policy: str | None = None
    facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """One criterion's answer: how far it is met, from 0 to 1 (pass_fail answers are 0 or 1)."""

    score: float
    reason: str
    evidence: str | None = None


@dataclass
class JudgeAnswer:
    verdicts: dict[str, Verdict]
    mistakes: list[str] = field(default_factory=list)


def system_prompt(brief: JudgeBrief) -> str:
    """The grader's instructions for `brief`."""
    item = '{"name": <criterion name, exactly as given>, '
    if brief.output == "partial_credit":
        item += '"score": <a number from 0 (not at all) to 1 (fully)>, '
    else:
        item += '"passed": true or false, '
    item += '"reason": <one short sentence>'
    if brief.evidence:
        item += ', "evidence": <the exact words or tool call from the evidence that decided it>'
    item += "}"
    shape = (
        f'{{"verdicts": [{item}, …]'
        + (', "mistakes": [<each mistake the agent made, one sentence>]' if brief.mistakes else "")
        + "}"
    )
    text = (
        "You are a strict, impartial grader of an AI agent's work. For each criterion, decide from the evidence "
        "given (the task prompt, the agent's responses and the tool calls it made) whether the criterion is met. "
        "Judge only what the evidence shows; when the evidence is missing or unclear, the criterion is not met. "
        "A criterion marked NEGATIVE describes a mistake: it is met when the agent made that mistake. "
        f"Answer with one JSON object and nothing else: {shape}, one verdict per criterion, in the order given."
    )
    if brief.policy:
        text += f"\n\nGrading policy of this task (follow it):\n{brief.policy}"
    return text


def user_message(asks: list[Ask], material: str, brief: JudgeBrief) -> str:
    """The evidence, the task's context facts and the criteria."""
    listed = "\n".join(
        f"- name: {a.name}\n  description: {a.description}"
        + ("\n  NEGATIVE: met means the agent made this mistake" if a.negative else "")
        for a in asks
    )
    facts = "".join(f"- {fact}\n" for fact in brief.facts)
    context = f"# Facts to rely on\n\n{facts}\n" if facts else ""
    return f"# Evidence\n\n{material}\n\n{context}# Criteria\n\n{listed}"


def parse_answer(content: str, names: list[str], brief: JudgeBrief, who: str) -> JudgeAnswer:
    """The judge's JSON answer (`content`), strictly: one verdict per name, fields as `brief` asked."""

    def bad(why: str) -> StepFailed:
        return StepFailed(
            f"the {who} gave an unusable answer: {why}; it began: {content[:300]!r}. Use a judge that "
            "follows JSON instructions, or give the criteria deterministic `check`s"
        )

    try:
        answer = json.loads(content)
    except ValueError as exc:
        raise bad(f"the message is not JSON ({exc})") from exc
    verdicts = answer.get("verdicts") if isinstance(answer, dict) else None
    if not isinstance(verdicts, list):
        raise bad('expected a JSON object with a "verdicts" list')
    found: dict[str, Verdict] = {}
    for item in verdicts:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise bad("a verdict is not an object with a `name`")
        name = item["name"]
        if name not in names:
            raise bad(f"a verdict names {name!r}, which is not one of the criteria ({', '.join(names)})")
        if name in found:
            raise bad(f"criterion {name!r} has two verdicts")
        found[name] = _verdict(item, name, brief, bad)
    if missing := [n for n in names if n not in found]:
        raise bad(f"no verdict for {', '.join(repr(n) for n in missing)}")
    mistakes = answer.get("mistakes", [])
    if brief.mistakes and (not isinstance(mistakes, list) or not all(isinstance(m, str) for m in mistakes)):
        raise bad("`mistakes` is not a list of sentences")
    return JudgeAnswer(found, list(mistakes) if brief.mistakes else [])


def _verdict(item: dict[str, Any], name: str, brief: JudgeBrief, bad: Any) -> Verdict:
    reason = item.get("reason", "")
    if not isinstance(reason, str):
        raise bad(f"`reason` of {name!r} is not text")
    evidence = item.get("evidence")
    if brief.evidence and (not isinstance(evidence, str) or not evidence.strip()):
        raise bad(f"`evidence` of {name!r} is missing or empty (the step asks for evidence per criterion)")
    if brief.output == "partial_credit":
        score = item.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
            raise bad(f"`score` of {name!r} is {score!r}, not a number from 0 to 1")
        return Verdict(float(score), reason, evidence if brief.evidence else None)
    passed = item.get("passed")
    if not isinstance(passed, bool):
        raise bad(f"`passed` of {name!r} is {passed!r}, not true/false")
    return Verdict(1.0 if passed else 0.0, reason, evidence if brief.evidence else None)
