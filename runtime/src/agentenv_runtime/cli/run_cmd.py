"""`agentenv run`: run a bundle's tasks (or one task file) and grade them.

Options are parsed with argparse rather than typer: this is the command people time (`agentenv run hello`),
and importing typer alone costs a tenth of its start-up budget.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenv import collect_garbage_again, fail, get_host, print_table
from agentenv.config import ConfigError, load_config
from agentenv.contracts import kinds

from agentenv_runtime.cli.run_report import report
from agentenv_runtime.engine.agent_choice import agent_choices, join_agent_choices
from agentenv_runtime.engine.bundle import Bundle, bundle_of_task_file, is_file
from agentenv_runtime.engine.engine import StepRecord
from agentenv_runtime.engine.install_preflight import sandbox_problem
from agentenv_runtime.engine.records import StoreError
from agentenv_runtime.engine.runner import TaskRunner, run_parallel, summary_of
from agentenv_runtime.engine.task import TaskError, TaskFile, read_task
from agentenv_runtime.sources import find_any_bundle, is_export

if TYPE_CHECKING:
    from agentenv_runtime.engine.runners import RolloutRunner


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def worker_count(asked: int, k: int) -> int:
    """Worker processes actually started: never more than the rollouts or the CPUs (a huge `--workers`
    once forked thousands of processes and exhausted memory); says so on stderr when it lowers the number."""
    cap = max(1, min(k, os.cpu_count() or 1))
    if asked > cap:
        print(f"--workers {asked}: using {cap} (at most one per rollout and per CPU)", file=sys.stderr)
        return cap
    return asked


def parser() -> argparse.ArgumentParser:
    """The options of `agentenv run`."""
    parse = argparse.ArgumentParser(
        prog="agentenv run",
        description="Run tasks and grade them; exit 0 only when every selected task passed. No argument: list bundles.",
    )
    add = parse.add_argument
    add(
        "target",
        nargs="?",
        metavar="TARGET",
        help="Bundle name, bundle folder, exported .tar.gz, registry://NAME@VERSION, or a task file.",
    )
    add("--task", "-t", action="append", default=[], metavar="NAME", help="Task name in the bundle (repeatable).")
    add("--split", metavar="NAME", help="A named task set of the bundle (its bundle.toml [splits]), e.g. train.")
    add(
        "--eval", dest="eval_name", metavar="NAME", help="An eval of the bundle (evals/NAME.toml): tasks, k, overrides."
    )
    add(
        "--seeds",
        metavar="FILE.csv",
        help="A seeded batch: one run per CSV row; its columns fill {{ name }} placeholders in the tasks.",
    )
    add(
        "--agent",
        action="append",
        default=[],
        metavar="[ROLE=]NAME",
        help="Agent: a bundle agent file name or an agent kind, for every agent of the task, or with ROLE= for the "
        "one acting as ROLE (repeatable: --agent red=solver --agent yellow=bot).",
    )
    add("--model", metavar="NAME", help="Model for llm agents and judges.")
    add("--model-url", metavar="URL", help="Model endpoint (base_url) for this run's agents, over the config's.")
    add("--sandbox", metavar="CHAIN", help="Where deployed worlds run (inline, process, docker, or a chain).")
    add("--seed", type=int, metavar="N", help="Seed (rollout i uses seed + i).")
    add("-k", type=_at_least_one, default=None, metavar="N", help="Rollouts per task (default 1, or the eval's k).")
    add(
        "--workers",
        type=_at_least_one,
        default=1,
        metavar="N",
        help="Worker processes for -k rollouts (worlds stay in-process in each); with --eval/--seeds, runs at a time.",
    )
    add("--runner", metavar="NAME", help="Run the -k rollouts with an installed runner (e.g. ray).")
    add("--address", metavar="ADDRESS", help="The runner's cluster address (ray: HOST:PORT); default: start one.")
    add("--dry-run", action="store_true", help="Check everything, run nothing.")
    add("--keep", action="store_true", help="Keep worlds and sandboxes; save world snapshots.")
    add("--resume", metavar="RUN_ID", help="Resume a stored run that did not finish.")
    add("--json", dest="as_json", action="store_true", help="Print a JSON summary.")
    return parse


def split_tasks(bundle: Bundle, split: str, names: list[str]) -> list[str]:
    """The task names of the bundle's named set `split` (refused beside --task, or when the bundle has no such set)."""
    if names:
        raise TaskError("--split and --task both choose tasks; give one of them")
    if split not in bundle.splits:
        known = ", ".join(sorted(bundle.splits)) or "none"
        where = f"{bundle.path / 'bundle.toml'}: field `splits`"
        raise TaskError(f"{where}: bundle {bundle.name!r} has no split {split!r} (splits: {known})")
    return list(bundle.splits[split])


def _select(
    target: str, names: list[str], split: str | None = None, eval_name: str | None = None
) -> tuple[Bundle | None, list[TaskFile]]:
    path = Path(target)
    if is_file(path) and not is_export(target):
        bundle = bundle_of_task_file(path, get_host())
        if bundle is not None and (problems := bundle.requirement_problems(get_host())):
            raise TaskError("\n".join(problems))
        if split is not None or eval_name is not None:
            option = f"--split {split}" if split is not None else f"--eval {eval_name}"
            raise TaskError(f"{option}: a task file is one task; name its bundle to run a split or an eval")
        return bundle, [read_task(path)]
    host = get_host()
    bundle = find_any_bundle(target, host)
    problems = bundle.requirement_problems(host)
    if problems:
        raise TaskError("\n".join(problems))
    if split is not None:
        names = split_tasks(bundle, split, names)
    if eval_name is not None:
        if names or split is not None:
            raise TaskError(f"--eval {eval_name} chooses the tasks; leave out --task and --split")
        from agentenv_runtime.engine.evals import read_eval  # batches: not on a plain run's start path

        names = read_eval(bundle, eval_name).tasks
    files = bundle.task_files()
    wanted = names or bundle.default_tasks or list(files)
    if not wanted:
        raise TaskError(f"bundle {bundle.name!r} has no tasks; add task files to {bundle.path / 'tasks'}")
    tasks = []
    for name in wanted:
        if name not in files:
            by_name = [p for p in files.values() if read_task(p).name == name]
            if not by_name:
                raise TaskError(f"bundle {bundle.name!r} has no task {name!r} (tasks: {', '.join(files) or 'none'})")
            files[name] = by_name[0]
        tasks.append(read_task(files[name]))
    return bundle, tasks


def check_overrides(
    host: Any, bundle: Bundle | None, tasks: list[TaskFile], *, agent: str | None, sandbox: str | None
) -> None:
    """Refuse `--sandbox` / `--agent` values that name nothing installed, before anything runs."""
    why = sandbox_problem(host, sandbox or "")
    if why:
        raise TaskError(f"--sandbox {sandbox}: {why}; fix: name installed providers, or leave --sandbox out")
    for role, name in agent_choices(agent).items():
        if name in host.registry(kinds.AGENT_KINDS):
            continue
        folders = [bundle.path] if bundle else [task.path.parent for task in tasks]
        candidates = [Path(name)] + [f / "agents" / f"{name}{suffix}" for f in folders for suffix in (".toml", ".json")]
        if not any(is_file(path) for path in candidates):
            kinds_known = ", ".join(sorted(host.registry(kinds.AGENT_KINDS))) or "none installed"
            given = f"{role}={name}" if role else name
            raise TaskError(
                f"--agent {given}: neither an installed agent kind ({kinds_known}) nor a policy file "
                f"agents/{name}.toml or .json in the bundle"
            )


def _list_bundles() -> None:
    host = get_host()
    bundles = host.registry(kinds.BUNDLES)
    if not bundles:
        print("No bundles installed. Add some: agentenv plugin add agentenv-hello (or agentenv-support-desk)")
        return
    from agentenv_runtime.install_check import problems_by_bundle  # packaging: not on a run's start path

    unmet = problems_by_bundle(host)
    rows = [
        (name, e.dist, "needs plugins: see `agentenv plugin check`" if unmet.get(name) else "ready", e.obj.description)
        for name, e in sorted(bundles.items())
    ]
    print_table(("BUNDLE", "DISTRIBUTION", "STATUS", "DESCRIPTION"), rows)
    print("\nRun one: agentenv run NAME  (or a bundle folder, or a task file)")


class Progress:
    """Progress on stderr: rich (colour, a live bar for many rollouts) on a terminal, plain lines otherwise
    (one per step for a single run, one per 10% of many rollouts), nothing with --json off a terminal."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.quiet, self.done, self.started = total, quiet, 0, time.perf_counter()
        self.console: Any = None
        self.bar: Any = None
        if not quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress as Bar

            self.console = Console(stderr=True)
            if total > 1:
                self.bar = Bar(console=self.console, transient=True)
                self.bar_task = self.bar.add_task("rollouts", total=total)
                self.bar.start()

    def _line(self, text: str, style: str = "") -> None:
        if self.console is not None:
            self.console.print(text, style=style or None, highlight=False, markup=False)
        else:
            print(text, file=sys.stderr)

    def step(self, task: str, event: str, record: StepRecord) -> None:
        if self.quiet or self.total > 1 or event == "started":
            return
        took = f" ({record.duration_ms:.1f} ms)" if record.duration_ms is not None else ""
        error = f": {record.error}" if record.error else ""
        style = {"succeeded": "green", "failed": "red"}.get(event, "yellow")
        self._line(f"[{task}] {record.id} ({record.type}) {event}{took}{error}", style)

    def finished(self, summary: dict[str, Any]) -> None:
        self.done += 1
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.update(self.bar_task, advance=1, description=f"{summary['name']} {summary['status']}")
            if self.done == self.total:
                self.bar.stop()
        if self.total == 1 or self.done % max(1, self.total // 10) == 0 or self.done == self.total:
            rate = self.done / max(time.perf_counter() - self.started, 1e-9)
            score = "-" if summary["score"] is None else f"{summary['score']:.2f}"
            self._line(
                f"[{summary['name']}] {self.done}/{self.total} {summary['status']} score={score} ({rate:.0f} runs/s)",
                "green" if summary["passed"] else "red",
            )


async def _run_all(
    runner: TaskRunner,
    bundle: Bundle | None,
    tasks: list[TaskFile],
    *,
    seed: int | None,
    k: int,
    overrides: dict[str, Any],
    keep: bool,
    resume: dict[str, Any] | None,
    progress: Progress,
    workers: int = 1,
    rollout_runner: RolloutRunner | None = None,
) -> list[dict[str, Any]]:
    results = []
    for task in tasks:
        base = seed if seed is not None else (task.seed if task.seed is not None else runner.config.get("run.seed", 0))
        if rollout_runner is not None:
            results.extend(
                await asyncio.to_thread(
                    rollout_runner.run,
                    task,
                    [int(base) + rollout for rollout in range(k)],
                    bundle=bundle.name if bundle else None,
                    bundle_dir=bundle.path if bundle else None,
                    overrides=overrides,
                    on_done=progress.finished,
                )
            )
            continue
        if workers > 1 and k > 1 and not keep and resume is None:
            seeds = [int(base) + rollout for rollout in range(k)]
            results.extend(
                await asyncio.to_thread(
                    run_parallel,
                    task,
                    seeds,
                    workers,
                    bundle=bundle.name if bundle else None,
                    bundle_dir=bundle.path if bundle else None,
                    overrides=overrides,
                    on_done=progress.finished,
                )
            )
            continue

        def on_step(event: str, step: StepRecord, name: str = task.name) -> None:
            progress.step(name, event, step)

        for rollout in range(k):
            record = await runner.run(
                task,
                seed=int(base) + rollout,
                bundle=bundle.name if bundle else None,
                bundle_dir=bundle.path if bundle else None,
                overrides=overrides,
                keep=keep,
                resume=resume,
                on_step=on_step,
            )
            summary = summary_of(record)
            progress.finished(summary)
            results.append(summary)
    return results


def _run_cancellable(coro: Any) -> tuple[Any, int]:
    """Run with Ctrl-C and SIGTERM cancelling the run (which tears down and records), then 130/143."""
    received: list[int] = []

    async def main() -> Any:
        job = asyncio.ensure_future(coro)
        loop = asyncio.get_running_loop()

        def stop(signum: int) -> None:
            received.append(signum)
            job.cancel()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop, signum)
        try:
            return await job
        except asyncio.CancelledError:
            return None

    result = asyncio.run(main())
    return result, (128 + received[0] if received else 0)


def pick_runner(
    host: Any, name: str | None, address: str | None, workers: int, *, keep: bool, resume: str | None
) -> RolloutRunner | None:
    """The `--runner` (checked before anything runs); `--address` without one is refused."""
    if name is None:
        if address is not None:
            raise TaskError("--address names a runner's cluster: give --runner too (e.g. --runner ray)")
        return None
    if keep or resume:
        raise TaskError(f"--runner {name} runs rollouts elsewhere: it cannot --keep worlds or --resume a run")
    entry = host.registry(kinds.RUNNERS).get(name)
    if entry is None:
        known = ", ".join(sorted(host.registry(kinds.RUNNERS))) or "none installed"
        raise TaskError(f"--runner {name}: no such runner ({known}); fix: agentenv plugin add agentenv-{name}")
    from agentenv_runtime.engine.runners import RolloutRunner, RunnerSettings

    runner_cls = entry.obj
    if not issubclass(runner_cls, RolloutRunner):
        raise TaskError(f"--runner {name}: {entry.dist} registered a class that is not a RolloutRunner")
    made: RolloutRunner = runner_cls(RunnerSettings(address=address, workers=workers))
    return made


def main(argv: Sequence[str]) -> int:
    """`agentenv run ARGS`; returns the exit code (`--help` and usage errors exit through argparse)."""
    return run(**vars(parser().parse_args(list(argv))))


def run(
    target: str | None = None,
    task: list[str] | None = None,
    split: str | None = None,
    eval_name: str | None = None,
    seeds: str | None = None,
    agent: list[str] | str | None = None,
    model: str | None = None,
    model_url: str | None = None,
    sandbox: str | None = None,
    seed: int | None = None,
    k: int | None = None,
    workers: int = 1,
    runner: str | None = None,
    address: str | None = None,
    dry_run: bool = False,
    keep: bool = False,
    resume: str | None = None,
    as_json: bool = False,
) -> int:
    """Run tasks and grade them; exit 0 only when every selected task passed. No argument: list bundles."""
    if target is None and resume is None:
        _list_bundles()
        return 0
    host = get_host()
    try:
        agent = join_agent_choices([agent] if isinstance(agent, str) else agent or [])
        rollout_runner = pick_runner(host, runner, address, workers, keep=keep, resume=resume)
        config = load_config()
        task_runner = TaskRunner(host, config)
        stored = task_runner.records.get(resume) if resume else None
        if stored:
            # the task file first: a bundle is recorded by name, which only an installed bundle answers to
            bundle, tasks = _select(stored.get("task_file") or stored["bundle"], [stored["task"]])
            seed = stored["seed"]
        else:
            bundle, tasks = _select(target or "", task or [], split, eval_name)
        check_overrides(host, bundle, tasks, agent=agent, sandbox=sandbox)
        chosen = (("agent", agent), ("model", model), ("model_url", model_url), ("sandbox", sandbox))
        overrides = {key: value for key, value in chosen if value}
        batch = None
        if (eval_name or seeds) and not stored:  # every run of the batch checked here, its placeholders filled
            if rollout_runner is not None or keep:
                raise TaskError(f"--{'runner' if rollout_runner else 'keep'} does not go with --eval or --seeds")
            from agentenv_runtime.cli.run_batch import plan_batch  # batches: not on a plain run's start path

            batch = plan_batch(
                task_runner,
                bundle,
                tasks,
                eval_name=eval_name,
                seeds=seeds,
                k=k,
                seed=seed,
                workers=workers,
                overrides=overrides,
                check_overrides=check_overrides,
            )
        for selected in [] if batch else tasks:  # the same checks a run makes: --dry-run and a run refuse the same
            folder = bundle.path if bundle else None
            task_runner.prepare(selected, model, bundle_dir=folder, agent=agent, model_url=model_url)
    except (TaskError, ConfigError, LookupError) as exc:
        fail(str(exc), 2)
    except StoreError as exc:
        fail(str(exc), 1)
    if dry_run and batch:
        from agentenv_runtime.cli.run_batch import describe

        print("\n".join(describe(batch)))
        return 0
    if dry_run:
        for selected in tasks:
            print(f"{selected.name}: {len(selected.steps)} steps ok ({', '.join(s.type for s in selected.steps)})")
        return 0
    k = k or 1
    workers = worker_count(workers, k) if batch is None else 1
    collect_garbage_again()  # start-up is over: the step classes are imported, the tasks checked
    total = len(batch.jobs) if batch else k * len(tasks)
    progress = Progress(total, quiet=as_json and not sys.stderr.isatty())
    if batch:
        from agentenv_runtime.engine.batch import run_jobs
    job = (
        run_jobs(
            task_runner,
            batch.jobs,
            concurrency=batch.concurrency,
            bundle=bundle.name if bundle else None,
            bundle_dir=bundle.path if bundle else None,
            on_done=progress.finished,
        )
        if batch
        else _run_all(
            task_runner,
            bundle,
            tasks,
            seed=seed,
            k=k,
            overrides=overrides,
            keep=keep,
            resume=stored,
            progress=progress,
            workers=workers,
            rollout_runner=rollout_runner,
        )
    )
    try:
        results, signal_exit = _run_cancellable(job)
    except StoreError as exc:
        fail(f"{exc} (the run could not be recorded; what it started was torn down)", 1)
    if signal_exit:
        print(
            "cancelled: everything the run started was torn down; the record was kept (agentenv runs list)",
            file=sys.stderr,
        )
        return signal_exit
    passed = report(results, batch.k if batch else k, as_json=as_json, extra=batch.extra if batch else None)
    return 0 if passed else 1
