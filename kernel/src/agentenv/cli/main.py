"""Entry point of `agentenv`: a small dispatcher in front of per-command typer apps.

Why not one big typer app: importing typer costs more than the whole start-up budget of
`agentenv --help`. The dispatcher prints the root help and version itself from a static table plus the
commands plugins declare (their modules are imported, their classes are not), and imports typer only
for the one command that actually runs.
"""

from __future__ import annotations

import os
import sys

from agentenv import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # the root help, when cached, imports neither `typing` nor the contracts (`dataclasses`)
    from collections.abc import Sequence
    from typing import Any

    from agentenv.contracts.cli import CliCommand

ABOUT = "Build simulated worlds for AI agents once; host many tasks and any agent in them."


def kernel_commands() -> dict[str, CliCommand]:
    """The kernel's own commands; every other command (`run`, `env`, `serve`, …) comes from a plugin."""
    from agentenv.contracts.cli import CliCommand

    return {
        "config": CliCommand("config", "Show the resolved configuration and where each value came from.",
                             "agentenv.cli.config_cmd:app"),
        "plugin": CliCommand("plugin", "List, inspect, check, add and remove plugins.", "agentenv.cli.plugin_cmd:app"),
    }  # fmt: skip


def _plugin_commands(group: str = "") -> dict[str, CliCommand]:
    """Plugin commands: top-level ones, or (with `group`) the sub-commands plugins add to that group,
    declared as `CliCommand("env validate", …)`. Help texts name the distribution that brings each."""
    from dataclasses import replace

    from agentenv.contracts import kinds
    from agentenv.plugins.host import get_host

    kernel, found = kernel_commands(), {}
    for name, entry in get_host().registry(kinds.CLI_COMMANDS).items():
        parent, _, sub = name.partition(" ")
        if (sub and parent == group and " " not in sub) or (not sub and not group and name not in kernel):
            found[sub or name] = replace(entry.obj, help=f"{entry.obj.help} ({entry.dist})")
    return found


def root_help() -> str:
    """The root help, from the cache while nothing it was made from changed (`agentenv.plugins.cache.cached_text`):
    then `agentenv --help` imports no plugin, no contract and no `typing`."""
    from agentenv.plugins.cache import cached_text

    ours = sorted((name, value) for name, value in os.environ.items() if name.startswith("AGENTENV_"))
    settings = "".join(f"{name}={value}\n" for name, value in ours)  # the plugin allow and deny lists among them
    return cached_text("root-help", lambda: _root_help(kernel_commands() | _plugin_commands()), os.environ, settings)


def _root_help(commands: dict[str, CliCommand]) -> str:
    width = max(len(name) for name in commands) + 2
    listed = "\n".join(f"  {name.ljust(width)}{commands[name].help}" for name in sorted(commands))
    usage = "Usage: agentenv [--version] [--help] COMMAND [ARGS]..."
    return f"{usage}\n\n  {ABOUT}\n\nCommands:\n{listed}\n\nRun `agentenv COMMAND --help` for a command's options."


def _as_click(obj: Any, name: str) -> Any:
    import typer.main

    if not isinstance(obj, typer.Typer):
        app = typer.Typer(add_completion=False)
        app.command(name=name)(obj)
        obj = app
    command = typer.main.get_command(obj)  # a click command
    for each in [command, *getattr(command, "commands", {}).values()]:  # one help style, plain, like `--help`'s
        each.rich_markup_mode = None
    return command


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-V"):
        print(f"agentenv {__version__}")
        for found in _foreign_distributions():  # another project's `agentenv` package over ours
            fix = f"pip uninstall agentenv && pip install --force-reinstall agentenv-kernel=={__version__}"
            print(f"warning: {found} also installs a top-level `agentenv`; fix: {fix}", file=sys.stderr)
        return 0
    if not args or args[0] in ("-h", "--help"):
        print(root_help())
        return 0
    from agentenv.contracts.ref import load_target

    commands, name = kernel_commands(), args[0]
    if name not in commands:
        commands.update(_plugin_commands())
    if name not in commands:
        import difflib

        close = difflib.get_close_matches(name, commands, n=1)
        from agentenv.plugins.host import get_host

        brings = get_host().command_hints().get(name)  # a command whose plugin is not installed
        hint = f" It comes with {brings}: agentenv plugin add {brings}" if brings else ""
        hint = hint or (f" Did you mean '{close[0]}'?" if close else "")
        print(f"agentenv: no such command '{name}'.{hint} See `agentenv --help`.", file=sys.stderr)
        return 2
    chosen = commands[name]
    if chosen.argv:
        try:
            code: int = load_target(chosen.target)(args[1:])
        except SystemExit as exc:  # argparse's --help and usage errors, `fail`
            return _exit_code(exc)
        return code
    command = _as_click(load_target(chosen.target), name)
    for sub, declared in _plugin_commands(name).items():
        command.add_command(_as_click(load_target(declared.target), sub), name=sub)
    try:
        collect_garbage_again()
        command(args[1:], prog_name=f"agentenv {name}", standalone_mode=True)
    except SystemExit as exc:
        return _exit_code(exc)
    return 0


def _foreign_distributions() -> list[str]:
    """Each installed `agentenv X.Y` (an unrelated project's), from folder listings: `--version` stays instant."""
    names = (n for p in sys.path if os.path.isdir(p or ".") for n in os.listdir(p or "."))
    return sorted({f"agentenv {n[9:-10]}" for n in names if n.startswith("agentenv-") and n.endswith(".dist-info")
                   and n[9:10].isdigit()})  # fmt: skip


def _exit_code(exc: SystemExit) -> int:
    return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def collect_garbage_again() -> None:
    """Turn the cyclic garbage collector back on once a command's start-up is over (see `entry_point`).

    Everything allocated so far (modules, classes, validators) lives until exit, so it is frozen first: later
    collections, during a long run, never walk it again.
    """
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def entry_point() -> int:
    """The `agentenv` console script (and `python -m agentenv`): `main`, then a quick exit.

    Start-up allocates hundreds of thousands of long-lived objects, which makes the cyclic garbage collector
    run for nothing (a tenth of `agentenv run hello`): it is off until the command has imported what it needs
    (`collect_garbage_again`). Interpreter teardown costs a fifth of `run hello`; once `main` returned,
    everything is closed and recorded, so exit handlers run, output is flushed and the process ends without
    it — unless a non-daemon thread still runs or a tracer/profiler (coverage) reports at exit.
    """
    import gc

    gc.disable()
    try:
        code = main()
    except BrokenPipeError:  # the reader left early (`agentenv --help | head -1`): no traceback, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    finally:
        collect_garbage_again()
    threading, others = sys.modules.get("threading"), []  # not imported: no thread was started with it
    if threading is not None:
        others = [t for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()]
    if others or sys.gettrace() is not None or sys.getprofile() is not None:
        return code
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - `contextlib` would be one more import for `agentenv --help`
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`agentenv … | head`) or stream
            pass
    os._exit(code)
