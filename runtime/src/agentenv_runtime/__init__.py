"""agentenv-runtime: the Env SDK, worlds, the task engine and run records.

Env authors import from here, and only from here:

    from agentenv_runtime import Env, ToolError, tool

Names are imported on first use (PEP 562): loading the runtime's plugin module for `agentenv --help` must
not import pydantic or SQLite.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # explicit re-exports for type checkers
    from agentenv.contracts import Message as Message

    from agentenv_runtime.engine.agent_choice import agent_for_role as agent_for_role
    from agentenv_runtime.engine.bundle import bundle_of_task_file as bundle_of_task_file
    from agentenv_runtime.engine.bundle import find_bundle as find_bundle
    from agentenv_runtime.engine.context import CURRENT_STEP as CURRENT_STEP
    from agentenv_runtime.engine.context import RunContext as RunContext
    from agentenv_runtime.engine.engine import Engine as Engine
    from agentenv_runtime.engine.engine import Planned as Planned
    from agentenv_runtime.engine.engine import StepRecord as StepRecord
    from agentenv_runtime.engine.engine import score_of as score_of
    from agentenv_runtime.engine.records import RUNS as RUNS
    from agentenv_runtime.engine.records import Records as Records
    from agentenv_runtime.engine.records import StoreError as StoreError
    from agentenv_runtime.engine.records import resolve_reference as resolve_reference
    from agentenv_runtime.engine.runner import RolloutJob as RolloutJob
    from agentenv_runtime.engine.runner import TaskRunner as TaskRunner
    from agentenv_runtime.engine.runner import combine_digests as combine_digests
    from agentenv_runtime.engine.runner import new_run_id as new_run_id
    from agentenv_runtime.engine.runner import rollout_jobs as rollout_jobs
    from agentenv_runtime.engine.runner import rollout_worker as rollout_worker
    from agentenv_runtime.engine.runners import RolloutRunner as RolloutRunner
    from agentenv_runtime.engine.task import StepDecl as StepDecl
    from agentenv_runtime.engine.task import TaskError as TaskError
    from agentenv_runtime.engine.task import TaskFile as TaskFile
    from agentenv_runtime.engine.task import ancestors as ancestors
    from agentenv_runtime.engine.task import read_task as read_task
    from agentenv_runtime.engine.task import task_json_schema as task_json_schema
    from agentenv_runtime.engine.verdict import Criterion as Criterion
    from agentenv_runtime.engine.verdict import VerifierResult as VerifierResult
    from agentenv_runtime.env.artifact import Artifact as Artifact
    from agentenv_runtime.env.artifact import ArtifactError as ArtifactError
    from agentenv_runtime.env.env import Env as Env
    from agentenv_runtime.env.tool import CALL_CONTEXT as CALL_CONTEXT
    from agentenv_runtime.env.tool import ToolContext as ToolContext
    from agentenv_runtime.env.tool import ToolError as ToolError
    from agentenv_runtime.env.tool import ToolSchemaError as ToolSchemaError
    from agentenv_runtime.env.tool import ToolSpec as ToolSpec
    from agentenv_runtime.env.tool import tool as tool
    from agentenv_runtime.live import LIVE_MARKER as LIVE_MARKER
    from agentenv_runtime.live import live_folder as live_folder
    from agentenv_runtime.live import pid_alive as pid_alive
    from agentenv_runtime.registry import Registry as Registry
    from agentenv_runtime.request_json import JsonRefused as JsonRefused
    from agentenv_runtime.request_json import loads_request as loads_request
    from agentenv_runtime.sandboxes import RUN_LABEL as RUN_LABEL
    from agentenv_runtime.sandboxes import NoSandbox as NoSandbox
    from agentenv_runtime.sandboxes import create_in_chain as create_in_chain
    from agentenv_runtime.sandboxes import make_provider as make_provider
    from agentenv_runtime.slow_clients import HeaderWaits as HeaderWaits
    from agentenv_runtime.slow_clients import server_settings as server_settings
    from agentenv_runtime.web_guard import SAFE_METHODS as SAFE_METHODS
    from agentenv_runtime.web_guard import cross_site_refusal as cross_site_refusal
    from agentenv_runtime.web_guard import host_is_local as host_is_local
    from agentenv_runtime.web_guard import is_loopback as is_loopback
    from agentenv_runtime.web_guard import origin_refusal as origin_refusal
    from agentenv_runtime.web_guard import read_body as read_body
    from agentenv_runtime.web_guard import replay_body as replay_body
    from agentenv_runtime.world import reference_triggers as _reference_triggers
    from agentenv_runtime.world import triggers as _triggers
    from agentenv_runtime.world.arguments import ArgumentLimits as ArgumentLimits
    from agentenv_runtime.world.arguments import argument_problem as argument_problem
    from agentenv_runtime.world.arguments import safe_text as safe_text
    from agentenv_runtime.world.build import broken_reason as broken_reason
    from agentenv_runtime.world.build import build_world as build_world
    from agentenv_runtime.world.build import load_artifact_spec as load_artifact_spec
    from agentenv_runtime.world.build import split_names as split_names
    from agentenv_runtime.world.card import CARD_PATH as CARD_PATH
    from agentenv_runtime.world.card import OPERATIONS as OPERATIONS
    from agentenv_runtime.world.card import build_card as build_card
    from agentenv_runtime.world.clock import CALENDAR_SECONDS as CALENDAR_SECONDS
    from agentenv_runtime.world.clock import MAX_RATE as MAX_RATE
    from agentenv_runtime.world.clock import ClockMode as ClockMode
    from agentenv_runtime.world.clock import parse_time as parse_time
    from agentenv_runtime.world.rbac import DEFAULT_ROLE as DEFAULT_ROLE
    from agentenv_runtime.world.rbac import SYSTEM_ROLE as SYSTEM_ROLE
    from agentenv_runtime.world.reference_triggers import is_reference_trigger as is_reference_trigger
    from agentenv_runtime.world.schedule import WorkingHours as WorkingHours
    from agentenv_runtime.world.tool_tokens import first_sentence as first_sentence
    from agentenv_runtime.world.tool_tokens import openai_tools as openai_tools
    from agentenv_runtime.world.tool_tokens import short_descriptions as short_descriptions
    from agentenv_runtime.world.tool_tokens import tool_prompt_tokens as tool_prompt_tokens
    from agentenv_runtime.world.trajectory import Trajectory as Trajectory
    from agentenv_runtime.world.trajectory import trajectory_digest as trajectory_digest
    from agentenv_runtime.world.triggers import BUILTIN_TRIGGER_KINDS as BUILTIN_TRIGGER_KINDS
    from agentenv_runtime.world.triggers import TriggerDef as TriggerDef
    from agentenv_runtime.world.world import GET_TIME as GET_TIME
    from agentenv_runtime.world.world import ToolOutcome as ToolOutcome
    from agentenv_runtime.world.world import World as World
    from agentenv_runtime.world.world import WorldCheckpoint as WorldCheckpoint
    from agentenv_runtime.world.world import WorldError as WorldError
    from agentenv_runtime.world.world import WorldToolAccess as WorldToolAccess

    # exported under clearer names than their modules give them
    lookup_path = _triggers.lookup
    matches_predicate = _triggers.matches
    translate_reference_trigger = _reference_triggers.translate

_HOMES = {  # public name -> the module that holds it (`module:attribute` where the names differ)
    "StoreError": "agentenv_runtime.engine.records",
    "resolve_reference": "agentenv_runtime.engine.records",
    "combine_digests": "agentenv_runtime.engine.runner",
    "task_json_schema": "agentenv_runtime.engine.task",
    "broken_reason": "agentenv_runtime.world.build",
    "Registry": "agentenv_runtime.registry",
    "trajectory_digest": "agentenv_runtime.world.trajectory",
    "Message": "agentenv.contracts.trigger",
    "agent_for_role": "agentenv_runtime.engine.agent_choice",
    "bundle_of_task_file": "agentenv_runtime.engine.bundle",
    "find_bundle": "agentenv_runtime.engine.bundle",
    "CURRENT_STEP": "agentenv_runtime.engine.context",
    "RunContext": "agentenv_runtime.engine.context",
    "Engine": "agentenv_runtime.engine.engine",
    "Planned": "agentenv_runtime.engine.engine",
    "StepRecord": "agentenv_runtime.engine.engine",
    "score_of": "agentenv_runtime.engine.engine",
    "RUNS": "agentenv_runtime.engine.records",
    "Records": "agentenv_runtime.engine.records",
    "RolloutJob": "agentenv_runtime.engine.runner",
    "TaskRunner": "agentenv_runtime.engine.runner",
    "new_run_id": "agentenv_runtime.engine.runner",
    "rollout_jobs": "agentenv_runtime.engine.runner",
    "rollout_worker": "agentenv_runtime.engine.runner",
    "RolloutRunner": "agentenv_runtime.engine.runners",
    "StepDecl": "agentenv_runtime.engine.task",
    "TaskError": "agentenv_runtime.engine.task",
    "TaskFile": "agentenv_runtime.engine.task",
    "ancestors": "agentenv_runtime.engine.task",
    "read_task": "agentenv_runtime.engine.task",
    "Criterion": "agentenv_runtime.engine.verdict",
    "VerifierResult": "agentenv_runtime.engine.verdict",
    "Artifact": "agentenv_runtime.env.artifact",
    "ArtifactError": "agentenv_runtime.env.artifact",
    "Env": "agentenv_runtime.env.env",
    "CALL_CONTEXT": "agentenv_runtime.env.tool",
    "ToolContext": "agentenv_runtime.env.tool",
    "ToolError": "agentenv_runtime.env.tool",
    "ToolSchemaError": "agentenv_runtime.env.tool",
    "ToolSpec": "agentenv_runtime.env.tool",
    "tool": "agentenv_runtime.env.tool",
    "NoSandbox": "agentenv_runtime.sandboxes",
    "RUN_LABEL": "agentenv_runtime.sandboxes",
    "create_in_chain": "agentenv_runtime.sandboxes",
    "make_provider": "agentenv_runtime.sandboxes",
    "ArgumentLimits": "agentenv_runtime.world.arguments",
    "argument_problem": "agentenv_runtime.world.arguments",
    "safe_text": "agentenv_runtime.world.arguments",
    "build_world": "agentenv_runtime.world.build",
    "load_artifact_spec": "agentenv_runtime.world.build",
    "split_names": "agentenv_runtime.world.build",
    "CARD_PATH": "agentenv_runtime.world.card",
    "OPERATIONS": "agentenv_runtime.world.card",
    "build_card": "agentenv_runtime.world.card",
    "CALENDAR_SECONDS": "agentenv_runtime.world.clock",
    "ClockMode": "agentenv_runtime.world.clock",
    "MAX_RATE": "agentenv_runtime.world.clock",
    "parse_time": "agentenv_runtime.world.clock",
    "DEFAULT_ROLE": "agentenv_runtime.world.rbac",
    "SYSTEM_ROLE": "agentenv_runtime.world.rbac",
    "first_sentence": "agentenv_runtime.world.tool_tokens",
    "openai_tools": "agentenv_runtime.world.tool_tokens",
    "short_descriptions": "agentenv_runtime.world.tool_tokens",
    "tool_prompt_tokens": "agentenv_runtime.world.tool_tokens",
    "is_reference_trigger": "agentenv_runtime.world.reference_triggers",
    "translate_reference_trigger": "agentenv_runtime.world.reference_triggers:translate",
    "WorkingHours": "agentenv_runtime.world.schedule",
    "Trajectory": "agentenv_runtime.world.trajectory",
    "BUILTIN_TRIGGER_KINDS": "agentenv_runtime.world.triggers",
    "TriggerDef": "agentenv_runtime.world.triggers",
    "lookup_path": "agentenv_runtime.world.triggers:lookup",
    "matches_predicate": "agentenv_runtime.world.triggers:matches",
    "GET_TIME": "agentenv_runtime.world.world",
    "ToolOutcome": "agentenv_runtime.world.world",
    "World": "agentenv_runtime.world.world",
    "WorldCheckpoint": "agentenv_runtime.world.world",
    "WorldError": "agentenv_runtime.world.world",
    "WorldToolAccess": "agentenv_runtime.world.world",
    "JsonRefused": "agentenv_runtime.request_json",
    "loads_request": "agentenv_runtime.request_json",
    "HeaderWaits": "agentenv_runtime.slow_clients",
    "LIVE_MARKER": "agentenv_runtime.live",
    "live_folder": "agentenv_runtime.live",
    "pid_alive": "agentenv_runtime.live",
    "server_settings": "agentenv_runtime.slow_clients",
    "SAFE_METHODS": "agentenv_runtime.web_guard",
    "cross_site_refusal": "agentenv_runtime.web_guard",
    "host_is_local": "agentenv_runtime.web_guard",
    "is_loopback": "agentenv_runtime.web_guard",
    "origin_refusal": "agentenv_runtime.web_guard",
    "read_body": "agentenv_runtime.web_guard",
    "replay_body": "agentenv_runtime.web_guard",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentenv_runtime' has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value
    return value
