"""RL benchmarks (the training-environments issue), in one script, on this machine.

Run: .venv/bin/python bench/rl_bench.py [--only state,episode,adapters,verl,openenv,ray]

- episode (support-refund, the solver's actions as a fixed script): reset + 4 steps + reward, episodes/s in
  one process and with 2 worker processes (target ≥ 1,000/s with 2 workers); baseline: `agentenv run`'s own
  rollouts (`TaskRunner`, scripted agent, one process), measured here too.
- adapters (support-refund solved, 4 steps an episode: 3 tool calls and the answer): steps/s through each trainer
  adapter that runs in this workspace's venv (async `rollout`, TRL's `environment_factory` class and
  `TaskReward`, the SkyRL text path: `assistant_message` + `apply_assistant` on generated text, as
  `AgentEnvTextEnv.step` does, Agent Lightning's agent class with its model in process and its reward event
  POSTed to a loopback sink in another process) against the direct episode API (fork, reset, `step`) in the same
  run (goal ≥ 0.8x, judged on this process's CPU time: the machine is shared; wall-time ratios are shown too).
- verl: verl's `AgentLoopWorker` running `AgentEnvAgentLoop` in batches of 8 (its tokenization, context merging
  and padding to 4,096 + 4,096 tokens included; a scripted server answers in tokens), and the agent loop's `run`
  alone (verl's continuous-token rendering included, the worker's padding and batching not), against the direct
  episode API and against verl's own `ToolAgentLoop` on the same script (its tools answering what the world
  answered), all in the verl venv the framework tests make (skipped without it).
- openenv: `agentenv openenv serve support-refund` against OpenEnv's echo environment on OpenEnv's own server
  (`bench/openenv_echo_server.py`, run in a venv made from $AGENTENV_WHEELHOUSE), driven by the same WebSocket
  client in this process: cold start to healthy (target ≤ 1 s; both with bytecode compiled, as installs have it,
  probed every 5 ms over a plain socket), step round-trip and steps/s with 32 sessions (target ≥ 2× theirs),
  medians of 5 alternating rounds, each 32 new sessions of a reset and 50 steps. Our step is a `get_ticket` tool
  call through the world (SQL, RBAC, trajectory); theirs echoes a string.
  The same server is measured in MCP mode too (`call_tool` actions, as `MCPToolClient` sends them; goal ≥ 2x
  theirs).
- ray: `agentenv run support-refund -k N --runner ray` rollouts/s on a local Ray with 2 CPUs against 1 CPU
  (target ≥ 1.8x; median of 3 runs of 500 rollouts per CPU), and RayEpisodes (32 slots on 2 actors against 1)
  episodes/s. Beside it, the machine's own ceiling: two processes of pure CPU work against one.
- state (globex world: slack+email+helpdesk, ~14 MB): checkpoint (in-memory snapshot) ≤ 5 ms, 16 forks kept
  alive ≤ 20 ms in total, reset ≤ 1 ms, `state_digest()` ≤ 5 ms. Baselines measured here: the snapshot's bytes
  form, forks that copy every app's database (what a fork cost before copy-on-write), a reset from the bytes form
  and hashing the snapshot bytes.

Every number is measured in this process (the Ray and OpenEnv parts start their own servers and processes);
ratios compare against a baseline run right here. Medians of repeated batches.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agentenv_runtime.world.build import build_world
from agentenv_runtime.world.world import World

SECTIONS = ("state", "episode", "adapters", "verl", "openenv", "ray")


def median_seconds(
    fn: Callable[[], object], repeat: int = 15, number: int = 5, setup: Callable[[], object] | None = None
) -> float:
    """Median seconds per call over `repeat` batches of `number` calls (`setup` runs untimed before each call)."""
    samples = []
    for _ in range(repeat):
        total = 0.0
        for _ in range(number):
            if setup is not None:
                setup()
            start = time.perf_counter()
            fn()
            total += time.perf_counter() - start
        samples.append(total / number)
    return statistics.median(samples)


def line(label: str, seconds: float, target_ms: float | None = None, baseline: float | None = None) -> None:
    text = f"  {label}: {seconds * 1000:.3f} ms"
    if target_ms is not None:
        text += f" (target ≤ {target_ms:g} ms: {'met' if seconds * 1000 <= target_ms else 'NOT met'})"
    if baseline is not None:
        text += f"; baseline {baseline * 1000:.2f} ms, {baseline / seconds:.1f}x"
    print(text)


def globex() -> World:
    return build_world(
        "slack,email,helpdesk", artifacts=["globex"], settings={"email": {"address": "support@globex.example"}}
    )


def one_write(world: World) -> None:
    """A typical rollout step: one helpdesk write (the other two apps stay untouched)."""
    outcome = world.call("add_ticket_comment", {"ticket_id": "TCK-90001", "body": "looking into it", "public": False})
    assert outcome.ok, outcome.error


def bench_state() -> None:
    world = globex()
    size = sum(len(env.snapshot()) for env in world.envs.values()) / 1e6
    started = time.perf_counter()
    world.state_digest()
    install = time.perf_counter() - started
    print(f"globex world, {size:.1f} MB of state; the first state_digest() installs the digest: {install * 1e3:.0f} ms")

    point = world.checkpoint()
    blob = world.snapshot()

    def dirty() -> None:
        one_write(world)

    line(
        "checkpoint after a rollout step (snapshot in memory; serializes the changed app)",
        median_seconds(world.checkpoint, setup=dirty),
        5,
        median_seconds(world.snapshot, setup=dirty),
    )
    line("checkpoint of an unchanged world", median_seconds(world.checkpoint))
    line("snapshot to bytes (stored form, the baseline above)", median_seconds(world.snapshot))
    world.restore_checkpoint(point)

    def eager_forks() -> None:
        for fork in [world.fork() for _ in range(16)]:
            for env in fork.envs.values():
                env.db  # noqa: B018 - materialize every app's database, as forks did before copy-on-write

    forks: list[World] = []
    keep = median_seconds(lambda: forks.extend(world.fork() for _ in range(16)), repeat=7, number=3, setup=forks.clear)
    line("16 forks kept alive", keep, 20, median_seconds(eager_forks, repeat=5, number=1))
    line(
        "16 forks, then one helpdesk write in each (copy on write pays for helpdesk only)",
        median_seconds(lambda: [one_write(f) for f in [world.fork() for _ in range(16)]], repeat=5, number=1),
    )
    line(
        "reset after a rollout step (restore the checkpoint)",
        median_seconds(lambda: world.restore_checkpoint(point), setup=dirty),
        1,
        median_seconds(lambda: world.restore(blob), setup=dirty),
    )
    line("reset of an untouched world", median_seconds(lambda: world.restore_checkpoint(point)))
    world.restore_checkpoint(point, hold=True)
    line(
        "reset after a rollout step, held (roll back to the savepoint)",
        median_seconds(lambda: world.restore_checkpoint(point, hold=True), setup=dirty),
        1,
        median_seconds(lambda: world.restore_checkpoint(point), setup=dirty),
    )
    world.restore_checkpoint(point)
    line(
        "state_digest() after a rollout step",
        median_seconds(world.state_digest, setup=dirty),
        5,
        median_seconds(lambda: hashlib.sha256(world.snapshot()).hexdigest(), setup=dirty),
    )
    world.restore_checkpoint(point)
    plain, digested = build_world("helpdesk", artifacts=["globex"]), build_world("helpdesk", artifacts=["globex"])
    digested.state_digest()
    line(
        "a helpdesk write with the digest's triggers installed",
        median_seconds(lambda: one_write(digested), number=50),
        None,
        median_seconds(lambda: one_write(plain), number=50),
    )


SOLVED = [
    {"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged boots"}},
    {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}},
    {
        "tool": "send_email",
        "arguments": {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99."},
    },
    {"answer": "Refunded 89.99, closed TCK-9001, emailed Dana."},
]


def batch_rate(batch: Any, slots: int, rounds: int) -> float:
    """Episodes per second: reset every slot, play the script, check every reward."""
    started = time.perf_counter()
    for _ in range(rounds):
        batch.reset()
        for action in SOLVED:
            results = batch.step([action] * slots)
        assert all(r is not None and r.reward == 1.0 for r in results), results
    return slots * rounds / (time.perf_counter() - started)


TICKET = {"ticket_id": "TCK-9001"}


def runner_rate(rollouts: int) -> float:
    import asyncio

    from agentenv.config import load_config
    from agentenv.plugins.host import get_host
    from agentenv_rl.split import find_task
    from agentenv_runtime.engine.runner import TaskRunner

    host = get_host()
    task, bundle_dir, bundle = find_task("support-refund", host)
    runner = TaskRunner(host, load_config())

    async def rollouts_() -> None:
        for seed in range(rollouts):
            record = await runner.run(task, seed=seed, bundle=bundle, bundle_dir=bundle_dir)
            assert record["score"] == 1.0

    started = time.perf_counter()
    asyncio.run(rollouts_())
    return rollouts / (time.perf_counter() - started)


def bench_episode() -> None:
    import tempfile

    from agentenv_rl.api import make, vector

    os.chdir(tempfile.mkdtemp(prefix="rl-bench-"))  # run records of the baseline land here
    baseline = runner_rate(200)
    print(f"support-refund: `agentenv run`-style rollouts (TaskRunner, scripted agent): {baseline:,.0f}/s")
    single = make("support-refund")
    started = time.perf_counter()
    for _ in range(500):
        single.reset()
        for action in SOLVED:
            result = single.step(action)
        assert result.reward == 1.0
    one = 500 / (time.perf_counter() - started)
    single.close()
    print(f"  one episode, reset + 4 steps + reward: {one:,.0f} episodes/s ({one / baseline:.1f}x the runner)")
    slots = 32
    local = vector("support-refund", slots)
    batch_rate(local, slots, 2)
    in_process = batch_rate(local, slots, 20)
    local.close()
    print(f"  {slots} forks in one process, stepped in a batch: {in_process:,.0f} episodes/s")
    workers = vector("support-refund", slots, workers=2)
    batch_rate(workers, slots, 2)
    two = batch_rate(workers, slots, 40)
    workers.close()
    verdict = "met" if two >= 1000 else "NOT met"
    print(
        f"  {slots} slots over 2 worker processes: {two:,.0f} episodes/s (target ≥ 1,000/s: {verdict}); "
        f"{two / in_process:.2f}x one process, {two / baseline:.1f}x the runner"
    )


def bench_adapters(episodes: int = 300) -> None:
    import asyncio
    import json
    import tempfile

    from agentenv_rl.api import TaskReward, apply_assistant, assistant_message, fresh_episode, rollout, trl_environment

    os.chdir(tempfile.mkdtemp(prefix="rl-bench-adapters-"))
    calls = [action for action in SOLVED if "tool" in action]
    answer = SOLVED[-1]["answer"]
    steps = episodes * len(SOLVED)

    def direct(count: int) -> None:
        for _ in range(count):
            episode = fresh_episode("support-refund")
            for action in SOLVED:
                result = episode.step(action)
            assert result.reward == 1.0

    def call(index: int, action: dict[str, Any]) -> dict[str, Any]:
        function = {"name": action["tool"], "arguments": json.dumps(action["arguments"])}
        return {"id": f"c{index}", "type": "function", "function": function}

    conversation = [{"role": "assistant", "content": None, "tool_calls": [call(i, a)]} for i, a in enumerate(calls)]
    conversation.append({"role": "assistant", "content": answer})

    def through_rollout(count: int) -> None:
        async def policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
            return conversation[sum(1 for m in messages if m["role"] == "assistant")]

        async def many() -> None:  # a trainer's rollouts share its event loop
            for _ in range(count):
                assert (await rollout(policy, "support-refund")).reward == 1.0

        asyncio.run(many())

    environment = trl_environment("support-refund")

    def through_trl_environment(count: int) -> None:
        for _ in range(count):
            instance = environment()
            instance.reset()
            for action in calls:
                getattr(instance, action["tool"])(**action["arguments"])
            instance.submit_answer(answer)
            assert instance.get_reward() == 1.0

    reward = TaskReward("support-refund")

    def through_task_reward(count: int) -> None:
        assert reward(completions=[conversation] * count) == [1.0] * count

    texts = [
        "<tool_call>" + json.dumps({"name": a["tool"], "arguments": a["arguments"]}) + "</tool_call>" for a in calls
    ]

    def through_text(count: int) -> None:
        for _ in range(count):
            episode = fresh_episode("support-refund")
            for text in [*texts, answer]:
                _, final = apply_assistant(episode, assistant_message(text))
            assert final is not None and final.reward == 1.0

    from agentenv_rl.api import AgentLightningAgent

    sink, sink_process = event_sink()

    class ScriptedAgent(AgentLightningAgent):
        """Agent Lightning's agent class with the model in process (its proxy's latency is the model's, not the
        adapter's); the reward events go over HTTP to a loopback sink, as they go to Agent Lightning's store."""

        async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
            return conversation[sum(1 for m in messages if m["role"] == "assistant")]

    agent_environment = {"AGL_OPENAI_BASE_URL": "unused", "AGL_EVENT_URL": sink, "AGENTENV_TASK": "support-refund"}

    def through_agent_lightning(count: int) -> None:
        async def many() -> None:
            for _ in range(count):
                assert (await ScriptedAgent(agent_environment).run()).reward == 1.0

        asyncio.run(many())

    ways: dict[str, Callable[[int], None]] = {
        "direct episode API": direct,
        "rollout() (async, chat messages)": through_rollout,
        "TRL environment_factory class": through_trl_environment,
        "TRL TaskReward (replayed completion)": through_task_reward,
        "SkyRL text path (<tool_call> parsing)": through_text,
        "Agent Lightning agent class (+ its reward POST)": through_agent_lightning,
    }
    for way in ways.values():  # warm up: each start is set up once per process
        way(2)
    rates: dict[str, list[float]] = {name: [] for name in ways}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(3):  # alternating rounds, so a busy spell of the machine hits every way alike
        for name, way in ways.items():
            started, used = time.perf_counter(), time.process_time()
            way(episodes // 3)
            rates[name].append((episodes // 3) * len(SOLVED) / (time.perf_counter() - started))
            cpu[name].append((episodes // 3) * len(SOLVED) / (time.process_time() - used))
    sink_process.terminate()
    print(f"support-refund, {steps:,} steps per way in 3 alternating rounds (medians):")
    report_rates(rates, cpu, "direct episode API")


def report_rates(rates: dict[str, list[float]], cpu: dict[str, list[float]], direct: str) -> None:
    """Each way's steps/s and its ratio to `direct`, by wall time and by this process's CPU time (the goal is
    judged on CPU time: the machine is shared, and other processes' bursts move wall-time ratios by 2x)."""
    base, base_cpu = statistics.median(rates[direct]), statistics.median(cpu[direct])
    for name, measured in rates.items():
        rate, ratio = statistics.median(measured), statistics.median(cpu[name]) / base_cpu
        verdict = "" if name == direct else f" (goal ≥ 0.8x: {'met' if ratio >= 0.8 else 'NOT met'})"
        print(f"  {name}: {rate:,.0f} steps/s, {rate / base:.2f}x direct; by CPU time {ratio:.2f}x{verdict}")


VERL_RATE = """
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from scripted import REFUND, REFUND_TOOLS, hermes_texts
from verl_agent_loop import build_worker, roll
from agentenv_rl.api import fresh_episode

import asyncio
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from agentenv_rl.api import AgentEnvAgentLoop, verl_rows

episodes, batch = int(sys.argv[2]), int(sys.argv[3])
texts = hermes_texts(REFUND, "Refunded 89.99.")
worker, server = build_worker(texts * 4, max_length=4096)
server.script = texts
def agent_loop():  # one a trajectory, made on the running loop, as verl's worker makes them
    return AgentEnvAgentLoop(trainer_config=DictConfigWrap(worker.config), server_manager=server,
                             tokenizer=worker.tokenizer, processor=None, dataset_cls=worker.dataset_cls,
                             data_config=DictConfigWrap(worker.config.data))
(row,) = verl_rows("support-refund", tools=REFUND_TOOLS)
actions = [{"tool": n, "arguments": a} for n, a in REFUND] + [{"answer": "Refunded 89.99."}]

def direct(count):
    for _ in range(count):
        episode = fresh_episode("support-refund", tools=REFUND_TOOLS)
        for action in actions:
            result = episode.step(action)
        assert result.reward == 1.0

def through_verl(count):
    for _ in range(count // batch):
        out = roll(worker, "support-refund", REFUND_TOOLS, batch)
        assert out.batch["rm_scores"].sum(-1).tolist() == [1.0] * batch

def through_loop(count):
    async def many():
        for _ in range(count // batch):
            outs = await asyncio.gather(*(agent_loop().run({}, raw_prompt=row["prompt"], extra_info=row["extra_info"])
                                          for _ in range(batch)))
            assert [o.reward_score for o in outs] == [1.0] * batch
    asyncio.run(many())

# verl's own ToolAgentLoop with the same tools (same schemas, so nearly the same prompt) as function tools that answer
# what the world answered: the same script and the same token counts through verl's native loop, so the difference
# to ours is what the world's calls and the adapter add.
from verl.experimental.agent_loop.agent_loop import ToolListWrap
from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
from verl.tools.function_tool import function_tool, get_function_tool
from agentenv_runtime import openai_tools

recorded = {}  # what the world answered each call, as the tool message's text: the native tools answer the same
played = fresh_episode("support-refund", tools=REFUND_TOOLS)
for action in actions[:-1]:
    outcome = played.step(action).observation
    recorded[action["tool"]] = json.dumps({k: outcome[k] for k in ("ok", "result", "error") if k in outcome},
                                          default=str)

def canned(name):
    def answer(**arguments):
        return recorded[name]
    return answer

for schema in openai_tools(played.tools()):
    properties = schema["function"]["parameters"].get("properties", {})
    for name in [p for p, v in properties.items() if "type" not in v]:  # anyOf: verl's schema model needs a type
        del properties[name]  # (send_email's cc and attachments: the native loop's prompt is a little shorter)
    function_tool(schema["function"]["name"], schema=schema)(canned(schema["function"]["name"]))
native_tools = ToolListWrap([get_function_tool(name) for name in REFUND_TOOLS])

def through_native(count):
    async def many():
        for _ in range(count // batch):
            loops = [ToolAgentLoop(trainer_config=DictConfigWrap(worker.config), server_manager=server,
                                   tokenizer=worker.tokenizer, processor=None, dataset_cls=worker.dataset_cls,
                                   data_config=DictConfigWrap(worker.config.data), tools=native_tools)
                     for _ in range(batch)]
            outs = await asyncio.gather(*(loop.run({}, raw_prompt=row["prompt"]) for loop in loops))
            assert all(o.num_turns == 8 for o in outs), [o.num_turns for o in outs]
    asyncio.run(many())

ways = {"direct episode API": direct, "verl's own ToolAgentLoop, canned tools (no world)": through_native,
        "AgentEnvAgentLoop.run (verl's tokenization, no worker)": through_loop,
        "verl AgentLoopWorker + AgentEnvAgentLoop": through_verl}
for way in ways.values():
    way(batch)
rates, cpu = {name: [] for name in ways}, {name: [] for name in ways}
for _ in range(3):
    for name, way in ways.items():
        started, used = time.perf_counter(), time.process_time()
        way(episodes // 3)
        rates[name].append((episodes // 3) * len(actions) / (time.perf_counter() - started))
        cpu[name].append((episodes // 3) * len(actions) / (time.process_time() - used))
print(json.dumps({"wall": rates, "cpu": cpu}))
"""


def bench_verl(episodes: int = 96, batch: int = 8) -> None:
    """verl's AgentLoopWorker running AgentEnvAgentLoop (scripted server in tokens, tiny tokenizer) against the
    direct episode API, both in the verl venv the framework tests make (verl is never in the workspace)."""
    import glob
    import json
    import subprocess
    from pathlib import Path

    venvs = sorted(glob.glob(os.path.expanduser("~/.cache/agentenv/framework-venvs/verl_agent_loop-*/bin/python")))
    if not venvs:
        print("skipped: no verl venv (the framework tests make it: pytest plugins/rl/rl/tests/test_frameworks.py)")
        return
    examples = str(Path(__file__).resolve().parents[1] / "examples" / "training")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTENV_")}
    scratch = tempfile.mkdtemp(prefix="rl-bench-verl-")
    proc = subprocess.run(
        [venvs[-1], "-c", VERL_RATE, examples, str(episodes), str(batch)],
        capture_output=True, text=True, cwd=scratch, env=env, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0:
        print(f"failed: {proc.stderr[-2000:]}")
        return
    measured = json.loads(proc.stdout.strip().splitlines()[-1])
    rates, cpu = measured["wall"], measured["cpu"]
    print(f"support-refund (4 of its tools offered), {episodes} episodes per way, batches of {batch}, 3 rounds:")
    report_rates(rates, cpu, "direct episode API")
    native = "verl's own ToolAgentLoop, canned tools (no world)"
    loop = "AgentEnvAgentLoop.run (verl's tokenization, no worker)"
    ratio = statistics.median(cpu[loop]) / statistics.median(cpu[native])
    verdict = "met" if ratio >= 0.8 else "NOT met"
    print(
        f"  AgentEnvAgentLoop.run against verl's own loop on the same script: {ratio:.2f}x by CPU time "
        f"(what the world and the adapter add; goal ≥ 0.8x: {verdict})"
    )


EVENT_SINK = """
import http.server, sys

class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def event_sink() -> tuple[str, Any]:
    """A loopback HTTP server in a process of its own that accepts JSON POSTs (Agent Lightning's event endpoint's
    part; its CPU is not this process's, as the store's is not the agent's): (URL, process)."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", EVENT_SINK], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return f"http://127.0.0.1:{port}/events", process


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(port: int) -> bool:
    """One GET /health over a plain socket connection (an HTTP client per attempt would add its own set-up,
    tens of milliseconds, to what is measured)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/health")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def cold_start(command: list[str], port: int, cwd: str) -> tuple[Any, float]:
    """Start a server; seconds until GET /health answers 200 (polled every 5 ms)."""
    import subprocess

    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while time.perf_counter() - started < 120:
        if healthy(port):
            return process, time.perf_counter() - started
        if process.poll() is not None:
            raise RuntimeError(f"{command[0]} exited with {process.returncode} before it was healthy")
        time.sleep(0.005)
    process.kill()
    raise RuntimeError(f"{command[0]} did not become healthy")


def drive(port: int, action: dict[str, Any], sessions: int, steps: int, client: str = "wire") -> tuple[float, float]:
    """(median step round-trip s, steps/s) with `sessions` WebSocket sessions stepping concurrently; `client` is
    "wire" (`ws_wire.WireSocket`, RFC 6455 on raw streams) or "websockets" (the library's asyncio client)."""
    import asyncio
    import json

    async def connect() -> tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[Any]], Any]:
        """(send, recv, close) of a new session."""
        if client == "wire":
            from ws_wire import WireSocket

            socket = WireSocket("127.0.0.1", port)
            await socket.open()

            async def send(text: str) -> None:
                socket.send(text)

            return send, socket.recv, socket.close
        import websockets

        library = await websockets.connect(f"ws://127.0.0.1:{port}/ws")
        return library.send, library.recv, library.close

    async def one(latencies: list[float]) -> None:
        message = json.dumps({"type": "step", "data": action})
        send, recv, close = await connect()
        try:
            await send(json.dumps({"type": "reset", "data": {}}))
            await recv()
            for _ in range(steps):
                sent = time.perf_counter()
                await send(message)
                reply = json.loads(await recv())
                latencies.append(time.perf_counter() - sent)
                assert reply["type"] == "observation", reply
        finally:
            await close()

    async def everyone() -> tuple[float, float]:
        latencies: list[float] = []
        started = time.perf_counter()
        await asyncio.gather(*(one(latencies) for _ in range(sessions)))
        return statistics.median(latencies), len(latencies) / (time.perf_counter() - started)

    return asyncio.run(everyone())


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used (from /proc; Linux)."""
    from pathlib import Path

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def openenv_python() -> str | None:
    """A venv with openenv-core from the wheelhouse (kept in /tmp between bench runs)."""
    import subprocess
    import sys
    from pathlib import Path

    wheelhouse = Path(os.environ.get("AGENTENV_WHEELHOUSE", "/nonexistent"))
    if not any(wheelhouse.glob("openenv_core-*.whl")):
        return None
    venv = Path("/tmp/agentenv-bench-openenv-venv")
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(wheelhouse)]
        subprocess.run([*pip, "openenv-core==0.3.0"], check=True)
    return str(python)


def bench_openenv(rounds: int = 5) -> None:
    """Both servers start (cold start timed), then the same client drives them in alternating rounds (so a busy
    spell of the machine hits both alike): each round 32 new sessions, each a reset and 50 steps; medians. Each
    server's CPU per step is read from /proc around its rounds: the part of the comparison no client can blur.

    The client is `ws_wire.WireSocket`: the `websockets` library's client costs more CPU per message than our
    server's answer, so on two cores it, not the server, set our rate. Its ratio is printed too, for reference."""
    import sys
    import tempfile
    from contextlib import ExitStack
    from pathlib import Path

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    from run_bench import compile_bytecode

    compile_bytecode()  # as installed: pip writes bytecode, so OpenEnv's venv below has it too
    scratch = tempfile.mkdtemp(prefix="rl-bench-openenv-")
    agentenv = str(Path(sys.executable).with_name("agentenv"))
    python = openenv_python()
    servers: dict[str, tuple[list[str], dict[str, Any]]] = {
        "ours": ([agentenv, "openenv", "serve", "support-refund"], {"tool": "get_ticket", "arguments": TICKET}),
        "ours (MCP mode)": (
            [agentenv, "openenv", "serve", "support-refund"],
            {"type": "call_tool", "tool_name": "get_ticket", "arguments": TICKET},
        ),
    }
    if python is not None:
        servers["theirs"] = ([python, str(here / "openenv_echo_server.py")], {"message": "hello"})
    sessions, steps = 32, 50
    with ExitStack() as stack:
        ports, starts, pids = {}, {}, {}
        for name, (command, _) in servers.items():
            ports[name] = free_port()
            flag = ["--port", str(ports[name])] if name.startswith("ours") else [str(ports[name])]
            process, starts[name] = cold_start([*command, *flag], ports[name], scratch)
            pids[name] = process.pid
            stack.callback(process.wait)
            stack.callback(process.terminate)
            drive(ports[name], servers[name][1], 4, 5)

        def measure(client: str, count: int) -> dict[str, list[tuple[float, float, float]]]:
            """Per server: (median round-trip s, steps/s, server CPU s per step) of each round."""
            runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in servers}
            for _ in range(count):
                for name in servers:
                    cpu = cpu_seconds(pids[name])
                    rt, rate = drive(ports[name], servers[name][1], sessions, steps, client)
                    per_step = (cpu_seconds(pids[name]) - cpu) / (sessions * (steps + 1))
                    runs[name].append((rt, rate, per_step))
            return runs

        runs = measure("wire", rounds)
        library = measure("websockets", 3) if "theirs" in servers else {}
    rt, rate, cpu = ({name: statistics.median(r[i] for r in runs[name]) for name in servers} for i in range(3))
    verdict = "met" if starts["ours"] <= 1 else "NOT met"
    cold = f"cold start to healthy {starts['ours']:.2f} s (target ≤ 1 s: {verdict})"
    print(f"agentenv openenv serve support-refund: {cold}")
    print(
        f"  {sessions} sessions: step round-trip median {rt['ours'] * 1000:.2f} ms, {rate['ours']:,.0f} steps/s, "
        f"server CPU {cpu['ours'] * 1e6:.0f} µs per step"
    )
    if "theirs" not in servers:
        print("  OpenEnv's echo server: skipped, openenv-core is not in $AGENTENV_WHEELHOUSE (.ci/run downloads it)")
        return
    ratio = starts["theirs"] / starts["ours"]
    print(f"OpenEnv's echo env on openenv-core's server: cold start {starts['theirs']:.2f} s ({ratio:.1f}x ours)")
    print(
        f"  {sessions} sessions: step round-trip median {rt['theirs'] * 1000:.2f} ms, {rate['theirs']:,.0f} steps/s, "
        f"server CPU {cpu['theirs'] * 1e6:.0f} µs per step"
    )
    verdict = "met" if rate["ours"] >= 2 * rate["theirs"] else "NOT met"
    each = ", ".join(f"{o[1] / t[1]:.1f}x" for o, t in zip(runs["ours"], runs["theirs"], strict=True))
    print(
        f"  ours vs theirs: {rate['ours'] / rate['theirs']:.1f}x the steps/s (target ≥ 2x: {verdict}; rounds: {each}), "
        f"{rt['theirs'] / rt['ours']:.1f}x faster round-trips, {cpu['theirs'] / cpu['ours']:.1f}x less server CPU "
        "per step"
    )
    mcp = rate["ours (MCP mode)"]
    verdict = "met" if mcp >= 2 * rate["theirs"] else "NOT met"
    print(
        f"  ours in MCP mode (call_tool actions): {mcp:,.0f} steps/s, {mcp / rate['theirs']:.1f}x theirs (target ≥ 2x: "
        f"{verdict}), server CPU {cpu['ours (MCP mode)'] * 1e6:.0f} µs per step"
    )
    theirs_rate = statistics.median(r[1] for r in library["theirs"])
    ours_rate = statistics.median(r[1] for r in library["ours"])
    print(
        f"  with the websockets library's client instead (3 rounds, for reference): {ours_rate:,.0f} against "
        f"{theirs_rate:,.0f} steps/s, {ours_rate / theirs_rate:.1f}x"
    )


def bench_ray() -> None:
    import tempfile

    import ray
    from agentenv.plugins.host import get_host
    from agentenv_ray.api import RayEpisodes, RayRunner
    from agentenv_rl.split import find_task
    from agentenv_runtime.engine.runners import RunnerSettings

    os.chdir(tempfile.mkdtemp(prefix="rl-bench-ray-"))
    task, bundle_dir, bundle = find_task("support-refund", get_host())
    rates: dict[int, tuple[float, float]] = {}
    for cpus in (1, 2):
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        try:
            runner = RayRunner(RunnerSettings(workers=cpus))

            def rollouts(k: int, runner: RayRunner = runner) -> float:
                started = time.perf_counter()
                done = runner.run(
                    task, list(range(k)), bundle=bundle, bundle_dir=bundle_dir, overrides={}, on_done=lambda s: None
                )
                assert len(done) == k and all(s["score"] == 1.0 for s in done)
                return k / (time.perf_counter() - started)

            rollouts(4 * cpus)  # workers warm: plugins imported, the task planned
            runs = statistics.median(rollouts(500 * cpus) for _ in range(3))
            batch = RayEpisodes("support-refund", 32, workers=cpus)
            batch_rate(batch, 32, 2)
            episodes = batch_rate(batch, 32, 20)
            batch.close()
            rates[cpus] = (runs, episodes)
        finally:
            ray.shutdown()
        print(f"  Ray with {cpus} CPU(s): {rates[cpus][0]:,.0f} rollouts/s (runner), {rates[cpus][1]:,.0f} episodes/s")
    ratio = rates[2][0] / rates[1][0]
    print(
        f"  2 workers vs 1: {ratio:.2f}x rollouts/s (target ≥ 1.8x: {'met' if ratio >= 1.8 else 'NOT met'}), "
        f"{rates[2][1] / rates[1][1]:.2f}x episodes/s"
    )
    print(f"  this machine's own ceiling: two CPU-bound Python processes do {parallel_ceiling():.2f}x the work of one")


def spin(seconds: float) -> int:
    """Pure-Python work for `seconds` of wall time; the number of loop turns done."""
    turns, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for _ in range(1000):
            turns += 1
    return turns


def parallel_ceiling(seconds: float = 1.0) -> float:
    """How much two processes of pure CPU work get done against one in the same time (2.0 on two idle cores
    that share nothing; less where the cores share a host or a cache): what any 2-worker speed-up here can reach.
    """
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as pool:
        pool.submit(spin, 0.1).result()  # the workers are up before anything is timed
        ratios = []
        for _ in range(3):  # alternating, so a busy spell of the host hits both alike
            one = pool.submit(spin, seconds).result()
            ratios.append(sum(pool.map(spin, [seconds, seconds])) / one)
    return statistics.median(ratios)


def main(argv: list[str] | None = None) -> None:
    parse = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parse.add_argument("--only", default=",".join(SECTIONS), help=f"Comma-separated sections ({', '.join(SECTIONS)}).")
    chosen = parse.parse_args(argv).only.split(",")
    runs: dict[str, Callable[[], Any]] = {
        "state": bench_state,
        "episode": bench_episode,
        "adapters": bench_adapters,
        "verl": bench_verl,
        "openenv": bench_openenv,
        "ray": bench_ray,
    }
    for name in chosen:
        if name in runs:
            print(f"== {name}")
            runs[name]()


if __name__ == "__main__":
    main()
