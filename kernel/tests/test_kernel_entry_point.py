"""The console script's start-up and exit: garbage collection off only while starting, exit handlers and output
kept by the quick exit, a normal exit while other threads still run."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

from agentenv.cli.main import collect_garbage_again


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=120
    )


def test_exit_handlers_run_and_output_is_flushed() -> None:
    done = python(
        """
        import atexit, sys
        atexit.register(print, "exit handler ran")
        sys.stdout.write("unflushed line without a newline")
        sys.argv = ["agentenv", "--version"]
        from agentenv.cli.main import entry_point
        raise SystemExit(entry_point())
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("unflushed line without a newlineagentenv ")
    assert done.stdout.rstrip().endswith("exit handler ran")


def test_exit_code_is_the_commands() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "run", "no-such-bundle"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "no bundle 'no-such-bundle'" in done.stderr


def test_a_running_thread_gets_the_normal_exit() -> None:
    done = python(
        """
        import sys, threading, time
        threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished")), daemon=False).start()
        sys.argv = ["agentenv", "--version"]
        from agentenv.cli.main import entry_point
        raise SystemExit(entry_point())
        """
    )
    assert done.returncode == 0, done.stderr
    assert "thread finished" in done.stdout


def test_garbage_collection_is_off_while_starting_and_on_for_the_run() -> None:
    done = python(
        """
        import atexit, gc, sys
        import agentenv_runtime.engine.runner as runner

        seen = {}
        prepare, run = runner.TaskRunner.prepare, runner.TaskRunner.run

        def watched_prepare(self, *args, **kwargs):
            seen.setdefault("prepare", gc.isenabled())  # the first call: the run prepares again (cached)
            return prepare(self, *args, **kwargs)

        async def watched_run(self, *args, **kwargs):
            seen["run"] = gc.isenabled()
            return await run(self, *args, **kwargs)

        runner.TaskRunner.prepare, runner.TaskRunner.run = watched_prepare, watched_run
        atexit.register(lambda: print("SEEN", seen["prepare"], seen["run"], gc.get_freeze_count() > 0))
        sys.argv = ["agentenv", "run", "hello"]
        from agentenv.cli.main import entry_point
        raise SystemExit(entry_point())
        """
    )
    assert done.returncode == 0, done.stderr
    assert "SEEN False True True" in done.stdout


def test_collect_garbage_again_freezes_what_start_up_made() -> None:
    assert gc.isenabled()
    collect_garbage_again()  # already on: nothing to do
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        collect_garbage_again()
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_reader_that_left_early_gets_no_traceback() -> None:
    """`agentenv --help | head -1`: the pipe closes before the help is written (unbuffered output, so the write
    itself fails, as it does once the help outgrows the pipe's buffer)."""
    import os

    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w") as closed:
        done = subprocess.run(
            [sys.executable, "-m", "agentenv", "--help"],
            stdout=closed,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            timeout=120,
        )
    assert (done.returncode, done.stderr) == (1, "")
