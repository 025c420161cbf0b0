"""`agentenv run BUNDLE --eval NAME` (evals/*.toml) and `--seeds FILE.csv` (seeded batches with {{ name }}
placeholders), on a real bundle of the fixture plugin's steps, and every bad eval or CSV named clearly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_testing.installs import CliResult
from engine_helpers import setup_cli

Agentenv = Callable[..., CliResult]

SCORED = """name = "{name}"
pass_threshold = 0.8

[[steps]]
id = "deploy"
type = "fixture_deploy"

[[steps]]
id = "mark"
type = "fixture_mark"
world = "deploy"
label = "{label}"

[[steps]]
id = "grade"
type = "fixture_score"
score = {score}
"""


@pytest.fixture
def bundle(on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(on_path, tmp_path, monkeypatch)
    folder = tmp_path / "evalb"
    (folder / "tasks").mkdir(parents=True)
    (folder / "evals").mkdir()
    (folder / "bundle.toml").write_text('name = "evalb"\n')
    (folder / "tasks" / "high.toml").write_text(SCORED.format(name="high", label="h", score="0.9"))
    (folder / "tasks" / "low.toml").write_text(SCORED.format(name="low", label="l", score="0.4"))
    batch = SCORED.format(name="batch", label="customer {{ customer }}", score='"{{ score }}"')
    (folder / "tasks" / "batch.toml").write_text(batch)
    (folder / "evals" / "smoke.toml").write_text(
        'description = "both"\ntasks = ["high", "low"]\nk = 2\nconcurrency = 2\n\n[overrides.low]\nk = 3\nseed = 100\n'
    )
    return folder


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_an_eval_runs_its_tasks_with_k_concurrency_and_per_task_overrides(bundle: Path, agentenv: Agentenv) -> None:
    done = agentenv("run", str(bundle), "--eval", "smoke", "--json")
    assert done.returncode == 1, done  # `low` scores 0.4
    summary = done.json()
    assert summary["eval"] == "smoke"
    assert [(t["name"], t["seed"]) for t in summary["tasks"]] == [
        ("high", 0),
        ("high", 1),
        ("low", 100),
        ("low", 101),
        ("low", 102),
    ]
    high, low = summary["aggregate"]
    assert (high["task"], high["runs"], high["passed"], high["mean"]) == ("high", 2, 2, 0.9)
    assert (low["task"], low["runs"], low["passed"], low["pass_hat_k"]) == ("low", 3, 0, 0.0)
    assert summary["pass_hat_k"] == {"1": 0.5, "2": 0.5}  # up to the fewest runs of a task

    wider = agentenv("run", str(bundle), "--eval", "smoke", "-k", "4", "--json").json()
    assert [t["name"] for t in wider["tasks"]].count("high") == 4  # -k over the eval's k …
    assert [t["name"] for t in wider["tasks"]].count("low") == 3  # … but not over a task's own override

    text = agentenv("run", str(bundle), "--eval", "smoke")
    assert "PASS RATE" in text.stdout and "FAILED: 2/5 passed" in text.stdout

    dry = agentenv("run", str(bundle), "--eval", "smoke", "--dry-run")
    assert dry.returncode == 0, dry
    assert "high: 2 run(s) ok (seeds 0…1" in dry.stdout and "5 run(s) in all, 2 at a time" in dry.stdout


def test_a_seeded_batch_fills_placeholders_per_row(bundle: Path, agentenv: Agentenv, tmp_path: Path) -> None:
    seeds = write(tmp_path / "rows.csv", "seed,customer,score\n7,ana,0.9\n7,ana,0.9\n8,bo,0.5\n7,bo,0.9\n")
    done = agentenv("run", str(bundle), "--task", "batch", "--seeds", seeds, "--json")
    assert done.returncode == 1, done  # the third row scores 0.5
    summary = done.json()
    runs = summary["tasks"]
    assert [(r["seed"], r["score"], r["passed"]) for r in runs] == [
        (7, 0.9, True),
        (7, 0.9, True),
        (8, 0.5, False),
        (7, 0.9, True),
    ]
    assert runs[0]["row"] == {"index": 1, "line": 2, "customer": "ana", "score": "0.9"}
    digests = [r["trajectory_digest"] for r in runs]
    assert digests[0] == digests[1] and digests[0] != digests[3]  # same row, same run; another customer differs
    (aggregate,) = summary["aggregate"]
    assert aggregate["runs"] == 4 and aggregate["passed"] == 3 and aggregate["min"] == 0.5
    assert summary["seeds"] == seeds

    trajectory = agentenv("runs", "trajectory", runs[3]["run_id"], "--json").json()
    assert [e["args"]["label"] for e in trajectory if e["kind"] == "tool_call"] == ["customer bo"]


def test_rows_without_a_seed_use_the_base_seed_and_an_eval_can_name_its_seeds_file(
    bundle: Path, agentenv: Agentenv
) -> None:
    (bundle / "seeds").mkdir()
    write(bundle / "seeds" / "people.csv", "customer,score\nana,0.9\nbo,0.9\n")
    write(bundle / "evals" / "people.toml", 'tasks = ["batch"]\nk = 2\nseed = 40\nseeds = "seeds/people.csv"\n')
    done = agentenv("run", str(bundle), "--eval", "people", "--json")
    assert done.returncode == 0, done
    assert [(t["seed"], t["row"]["customer"]) for t in done.json()["tasks"]] == [
        (40, "ana"),
        (41, "ana"),
        (42, "bo"),
        (43, "bo"),
    ]


@pytest.mark.parametrize(
    ("eval_text", "message"),
    [
        ('tasks = ["high"]\nkk = 2\n', "field `kk`: remove it (fields: description, tasks, k, concurrency"),
        ('tasks = ["nope"]\n', "field `tasks`: bundle 'evalb' has no task 'nope'"),
        ('tasks = ["high"]\n[overrides.low]\nk = 2\n', "field `overrides.low`: 'low' is not in `tasks`"),
        ('tasks = ["high"]\nk = 0\n', "field `k`: Input should be greater than or equal to 1"),
        (
            'tasks = ["high"]\n[overrides.high]\nagnet = "x"\n',
            "field `overrides.high.agnet`: remove it (fields: k, seed",
        ),
        ("tasks = [\n", "invalid TOML"),
        ("tasks = []\n", "field `tasks`"),
    ],
)
def test_bad_eval_files_are_named(bundle: Path, agentenv: Agentenv, eval_text: str, message: str) -> None:
    path = write(bundle / "evals" / "bad.toml", eval_text)
    done = agentenv("run", str(bundle), "--eval", "bad")
    assert done.returncode == 2, done
    assert path in done.stderr and message in done.stderr, done.stderr


def test_eval_option_mistakes(bundle: Path, agentenv: Agentenv) -> None:
    missing = agentenv("run", str(bundle), "--eval", "nightly")
    assert missing.returncode == 2 and "has no eval 'nightly' (evals: smoke)" in missing.stderr
    assert str(bundle / "evals" / "nightly.toml") in missing.stderr
    both = agentenv("run", str(bundle), "--eval", "smoke", "--task", "high")
    assert both.returncode == 2 and "--eval smoke chooses the tasks" in both.stderr
    one_file = agentenv("run", str(bundle / "tasks" / "high.toml"), "--eval", "smoke")
    assert one_file.returncode == 2 and "a task file is one task" in one_file.stderr


@pytest.mark.parametrize(
    ("csv_text", "message"),
    [
        ("seed,customer,score\nseven,ana,0.9\n", "row 1 (line 2): field `seed`: 'seven' is not a whole number"),
        ("customer,score\nana,0.9\nbo\n", "row 2 (line 3): 1 value(s) for 2 column(s)"),
        ("customer,score,colour\nana,0.9,red\n", "column(s) 'colour' fill no {{ name }} placeholder"),
        ("customer,score,task\nana,0.9,low\n", "row 1 (line 2): field `task`: 'low' is not a selected task"),
        ("customer,sco-re\nana,0.9\n", "line 1, column 2: 'sco-re' is not a placeholder name"),
        ("customer,score,customer\nana,0.9,bo\n", "column 'customer' appears twice"),
        ("customer,score\n", "the header has no rows under it"),
        ("", "the file is empty"),
        ("customer,score\nana,7\n", "row 1 (line 2): "),  # the filled task fails its own checks
    ],
)
def test_bad_seed_files_are_named(
    bundle: Path, agentenv: Agentenv, tmp_path: Path, csv_text: str, message: str
) -> None:
    seeds = write(tmp_path / "bad.csv", csv_text)
    done = agentenv("run", str(bundle), "--task", "batch", "--seeds", seeds)
    assert done.returncode == 2, done
    assert seeds in done.stderr and message in done.stderr, done.stderr


def test_a_filled_value_that_breaks_a_field_names_the_row_and_field(
    bundle: Path, agentenv: Agentenv, tmp_path: Path
) -> None:
    seeds = write(tmp_path / "rows.csv", "customer,score\nana,0.9\nbo,7\n")
    done = agentenv("run", str(bundle), "--task", "batch", "--seeds", seeds)
    assert done.returncode == 2, done
    assert f"{seeds}: row 2 (line 3): " in done.stderr and "field `score`" in done.stderr
    missing = agentenv("run", str(bundle), "--task", "batch", "--seeds", str(tmp_path / "none.csv"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_concurrency_runs_that_many_at_a_time(bundle: Path, agentenv: Agentenv) -> None:
    meet = '[[steps]]\nid = "deploy"\ntype = "fixture_deploy"\n\n[[steps]]\nid = "meet"\ntype = "fixture_meet"\n'
    write(bundle / "tasks" / "meet.toml", f'name = "meet"\n\n{meet}group = "g"\nparties = 3\n')
    write(bundle / "evals" / "together.toml", 'tasks = ["meet"]\nk = 3\nconcurrency = 3\n')
    done = agentenv("run", str(bundle), "--eval", "together", "--json")
    assert done.returncode == 0, done  # each run waits in `meet` until all three are there at once
    assert [t["seed"] for t in done.json()["tasks"]] == [0, 1, 2]


def test_fill_keeps_types_and_leaves_other_templates_alone() -> None:
    from agentenv_runtime.engine.seeds import fill

    fields = {"a": "{{ n }}", "b": "x {{n}} y", "c": "{{ saved.id }} {{ other }}", "d": ["{{ t }}", 3], "e": "{{ w }}"}
    values = {"n": "89.99", "t": "true", "w": "plain words"}
    assert fill(fields, values) == {
        "a": 89.99,
        "b": "x 89.99 y",
        "c": "{{ saved.id }} {{ other }}",
        "d": [True, 3],
        "e": "plain words",
    }


def test_placeholder_defaults_fill_a_plain_run_and_a_row_wins_over_them(
    bundle: Path, agentenv: Agentenv, tmp_path: Path
) -> None:
    task = SCORED.format(name="batch", label="customer {{ customer }}", score='"{{ score }}"')
    with_defaults = task.replace("[[steps]]", '[placeholders]\ncustomer = "dana"\nscore = 0.9\n\n[[steps]]', 1)
    (bundle / "tasks" / "batch.toml").write_text(with_defaults)
    plain = agentenv("run", str(bundle), "--task", "batch", "--json")
    assert plain.returncode == 0, plain
    (run,) = plain.json()["tasks"]
    assert run["score"] == 0.9  # the number 0.9, not the text "{{ score }}"
    trajectory = agentenv("runs", "trajectory", run["run_id"], "--json").json()
    assert [e["args"]["label"] for e in trajectory if e["kind"] == "tool_call"] == ["customer dana"]

    seeds = write(tmp_path / "rows.csv", "customer\nbo\n")  # `score` is not a column: its default fills it
    done = agentenv("run", str(bundle), "--task", "batch", "--seeds", seeds, "--json")
    assert done.returncode == 0, done
    (row,) = done.json()["tasks"]
    trajectory = agentenv("runs", "trajectory", row["run_id"], "--json").json()
    assert row["score"] == 0.9
    assert [e["args"]["label"] for e in trajectory if e["kind"] == "tool_call"] == ["customer bo"]

    (bundle / "tasks" / "batch.toml").write_text(
        task.replace("[[steps]]", '[placeholders]\n"not a name" = 1\n\n[[steps]]', 1)
    )
    bad = agentenv("run", str(bundle), "--task", "batch")
    assert bad.returncode == 2 and "placeholders" in bad.stderr and "not a name" in bad.stderr, bad


def test_every_batch_prints_the_aggregate_table_even_with_one_run_per_task(
    bundle: Path, agentenv: Agentenv, tmp_path: Path
) -> None:
    write(bundle / "evals" / "once.toml", 'tasks = ["high", "low"]\nk = 1\n')
    text = agentenv("run", str(bundle), "--eval", "once")
    assert text.returncode == 1, text
    lines = text.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("TASK") and "PASS RATE" in line)
    table = [line.split() for line in lines[header + 1 :] if line.split()[:1] in (["high"], ["low"])]
    assert [row[:3] for row in table] == [["high", "1", "1"], ["low", "1", "0"]]
    assert table[0][4:8] == ["100.0%", "0.90", "0.90", "0.90"] and table[1][4] == "0.0%"

    seeds = write(tmp_path / "one.csv", "customer,score\nana,0.9\n")
    single = agentenv("run", str(bundle), "--task", "batch", "--seeds", seeds)
    assert single.returncode == 0, single
    assert any(line.split()[:3] == ["batch", "1", "1"] for line in single.stdout.splitlines()), single.stdout
