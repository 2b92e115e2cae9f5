"""The entry points themselves: `python -m agentv_gate`, and help texts that state the defaults the code uses."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentv_gate import __version__
from agentv_gate.cli import main
from agentv_gate.errors import (
    EXIT_CODES,
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_NO_CASES,
    EXIT_OK,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USAGE,
)
from agentv_gate.models import DEFAULT_JUDGE_TIMEOUT_SECONDS, DEFAULT_THRESHOLD, DEFAULT_WORKERS
from tests.helpers.cli import run_cli
from tests.helpers.docs import DOCS
from tests.helpers.files import make_repo
from tests.helpers.suites import PARIS_TARGETS


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "agentv_gate", "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"agentv-gate {__version__}"


def test_python_dash_m_passes_the_exit_code_through(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([sys.executable, "-m", "agentv_gate", "validate", "empty"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == EXIT_NO_CASES
    assert "agentv-gate: no eval files found" in proc.stderr


def test_run_help_states_the_defaults_the_code_uses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines to the terminal width
    assert re.search(rf"--threshold THRESHOLD [^-]*\(default {DEFAULT_THRESHOLD}[;)]", help_text), help_text
    assert re.search(rf"--workers WORKERS [^-]*\(default {DEFAULT_WORKERS}\)", help_text), help_text
    assert re.search(rf"--judge-timeout JUDGE_TIMEOUT [^-]*\(default {DEFAULT_JUDGE_TIMEOUT_SECONDS:g}\)", help_text), help_text
    assert "0.8" not in help_text


def test_the_action_and_the_readme_state_the_same_defaults() -> None:
    root = Path(__file__).resolve().parents[1]
    action = (root / "action.yml").read_text(encoding="utf-8")
    readme = DOCS
    assert f"(CLI default {DEFAULT_THRESHOLD})" in action
    assert f"(CLI default {DEFAULT_WORKERS})" in action
    assert f"`--threshold X` (default {DEFAULT_THRESHOLD}" in readme
    assert f"`--workers N` (default {DEFAULT_WORKERS}" in readme


def _readme_table(readme: str, header: str) -> dict[str, str]:
    """The rows of the README table whose header row starts `| header |`: first-cell names -> the row."""
    table = readme.split(f"| {header} |", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, str] = {}
    for row in table.splitlines()[2:]:
        for name in re.findall(r"`([a-z-]+)`", row.split("|")[1]):
            rows[name] = row
    return rows


def test_the_action_and_the_readme_name_the_same_inputs_defaults_and_outputs() -> None:
    root = Path(__file__).resolve().parents[1]
    action = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))
    readme = DOCS
    outputs = _readme_table(readme, "output")
    assert set(outputs) == set(action["outputs"])
    inputs = _readme_table(readme, "input")
    assert set(inputs) == set(action["inputs"])
    for name, spec in action["inputs"].items():
        if spec.get("default"):
            assert f"`{spec['default']}`" in inputs[name] and "default" in inputs[name], (name, inputs[name])


# ----------------------------------------------------------------------- one exit code per outcome

PASSING = "tests:\n  - id: capital\n    input: q\n    assertions: [{type: contains, value: Paris}]\n"


def test_exit_codes_are_distinct() -> None:
    codes = [EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_CASES, EXIT_INTERNAL, EXIT_SIGINT, EXIT_SIGTERM]
    assert len(set(codes)) == len(codes)


@pytest.mark.parametrize("command", ["run", "validate"])
def test_no_cases_found_has_its_own_exit_code(repo: Path, command: str) -> None:
    """A gate pointed at the wrong folder must neither pass nor look like a broken configuration."""
    (repo / "elsewhere").mkdir()
    proc = run_cli(command, "elsewhere", cwd=repo)
    assert proc.returncode == EXIT_NO_CASES, proc.stderr
    assert "agentv-gate: no eval" in proc.stderr and "elsewhere" in proc.stderr


def _break_validate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug of ours, injected where no deliberate error could come from."""
    from agentv_gate.commands import validate

    def plan_paths(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"a bug holding {os.environ['OPENAI_API_KEY']}")

    monkeypatch.setattr(validate, "plan_paths", plan_paths)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-logs-1234")


def test_an_internal_error_is_one_clear_line_with_its_own_exit_code(
        repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _break_validate(monkeypatch)
    monkeypatch.chdir(repo)
    assert main(["validate", "evals"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "agentv-gate: internal error: RuntimeError: a bug holding ***" in err
    assert "--verbose" in err and "Traceback" not in err
    assert "sk-not-for-logs-1234" not in err


def test_verbose_adds_the_traceback_of_an_internal_error(
        repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _break_validate(monkeypatch)
    monkeypatch.chdir(repo)
    assert main(["validate", "--verbose", "evals"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "in plan_paths" in err
    assert "sk-not-for-logs-1234" not in err


def test_quiet_and_verbose_exclude_each_other(repo: Path) -> None:
    proc = run_cli("run", "--quiet", "--verbose", cwd=repo)
    assert proc.returncode == EXIT_USAGE
    assert "not allowed with argument" in proc.stderr


@pytest.mark.parametrize("argv, message", [
    # an option given twice (an action input and the same flag in extra-args): neither silently wins
    (["run", "evals", "--threshold", "0.9", "--threshold", "0.1"],
     "--threshold given twice (0.9, then 0.1)"),
    (["run", "evals", "--shard", "1/2", "--shard=2/2"], "--shard given twice (1/2, then 2/2)"),
    (["validate", "evals", "--targets", "a.yaml", "--targets", "b.yaml"], "--targets given twice"),
    (["merge", "a.jsonl", "--results-out", "x.jsonl", "--results-out", "y.jsonl"], "--results-out given twice"),
    (["compare", "a.jsonl", "b.jsonl", "--min-delta", "0.1", "--threshold", "0.3"],
     "--min-delta/--threshold given twice (0.1, then 0.3)"),
    # --list runs nothing, but a value the run would refuse is still refused
    (["run", "evals", "--list", "--max-failures", "0"], "--max-failures 0 is not a whole number >= 1"),
    (["run", "evals", "--list", "--fail-on", "regression"], "--fail-on regression needs --baseline"),
    (["run", "evals", "--list", "--trials", "0"], "--trials 0 is not in 1..100"),
    (["run", "evals", "--list", "--alpha", "0.05"], "--alpha needs --baseline"),
    (["run", "evals", "--list", "--history", "h.jsonl"], "--history needs --baseline"),
    (["run", "evals", "--list", "--baseline", "b.jsonl", "--alpha", "1"],
     "--alpha 1.0 is not a probability strictly between 0 and 1"),
    (["compare", "a.jsonl", "b.jsonl", "--alpha", "0"], "--alpha 0.0 is not a probability strictly between 0 and 1"),
    (["run", "evals", "--list", "--max-trials", "20"], "--max-trials needs --baseline"),
    (["run", "evals", "--list", "--baseline", "b.jsonl", "--max-trials", "1"], "--max-trials 1 is not in 2..1000"),
    (["compare", "a.jsonl", "b.jsonl", "--max-trials", "1001"], "--max-trials 1001 is not in 2..1000"),
    # two reports written to one file: the last one written replaces the other
    (["run", "evals", "--junit", "out/x", "--results", "out/x"],
     "--junit out/x and --results out/x name the same file"),
    (["merge", "a.jsonl", "--junit", "o/r.jsonl", "--results-out", "o/r.jsonl"],
     "--junit o/r.jsonl and --results-out o/r.jsonl name the same file"),
    (["run", "evals", "--junit", "out/j.xml", "--results", "out/report.html"],
     "--results out/report.html and report.html (beside the JUnit file) name the same file"),
    # a repository root that is not there: '/'-prefixed references and the root check would use it
    (["run", "evals", "--repo-root", "nowhere"], "--repo-root nowhere is not a folder"),
    (["validate", "evals", "--repo-root", "evals/s.eval.yaml"], "--repo-root evals/s.eval.yaml is not a folder"),
    # a cache folder the run would never use
    (["run", "evals", "--no-cache", "--cache-dir", "cache"],
     "--cache-dir cache and --no-cache contradict each other"),
])
def test_contradicting_options_are_refused_before_anything_runs(repo: Path, argv: list[str], message: str) -> None:
    (repo / "evals" / "s.eval.yaml").write_text("tests:\n  - id: one\n    input: hi\n"
                                                "    assertions: [{type: contains, value: hi}]\n")
    proc = run_cli(*argv, cwd=repo)
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert message in proc.stderr
    assert not (repo / ".agentv-gate").exists() and not (repo / "cache").exists()


def test_both_reports_may_be_discarded_to_dev_null(repo: Path) -> None:
    (repo / "evals" / "s.eval.yaml").write_text("tests:\n  - id: one\n    input: hi\n"
                                                "    assertions: [{type: contains, value: Berlin}]\n")
    proc = run_cli("run", "evals", "--junit", os.devnull, "--results", os.devnull, cwd=repo)
    assert proc.returncode == EXIT_FAILED and "same file" not in proc.stderr, proc.stderr  # the case ran


def test_an_option_repeated_with_the_same_value_is_not_a_contradiction(repo: Path) -> None:
    proc = run_cli("validate", "evals", "--targets", ".agentv/targets.yaml", "--targets=.agentv/targets.yaml",
                   "--quiet", "--quiet", cwd=repo)
    assert proc.returncode != EXIT_USAGE, proc.stderr


# ----------------------------------------------------------------------- --quiet / --verbose


def _many_cases(repo: Path, passing: int) -> None:
    """`passing` cases the Paris agent passes, then one it fails."""
    make_repo(repo, PARIS_TARGETS)
    cases = "".join(f"  - id: ok-{n:03}\n    input: q\n    assertions: [{{type: contains, value: Paris}}]\n"
                    for n in range(passing))
    cases += "  - id: wrong-city\n    input: q\n    assertions: [{type: contains, value: Berlin}]\n"
    (repo / "evals" / "s.eval.yaml").write_text("tests:\n" + cases)


def test_default_output_lists_failures_and_some_passes(repo: Path) -> None:
    _many_cases(repo, 60)
    proc = run_cli("run", "evals", cwd=repo)
    assert proc.returncode == EXIT_FAILED
    assert "wrong-city" in proc.stdout and "ok-000" in proc.stdout
    assert "... and 10 more passed cases (--verbose lists them)" in proc.stdout


def test_quiet_prints_what_did_not_pass_and_the_totals_only(repo: Path) -> None:
    _many_cases(repo, 60)
    proc = run_cli("run", "evals", "--quiet", cwd=repo)
    assert proc.returncode == EXIT_FAILED
    assert "wrong-city" in proc.stdout
    assert "ok-000" not in proc.stdout and "more passed" not in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("agentv-gate FAILED: 61 cases: 60 passed, 1 failed")
    assert "response cache" not in proc.stderr
    (repo / "evals" / "s.eval.yaml").write_text(PASSING)
    proc = run_cli("run", "evals", "--quiet", cwd=repo)
    assert proc.returncode == EXIT_OK
    assert proc.stdout.splitlines() == ["agentv-gate PASSED: 1 case: 1 passed, 0 failed, 0 errors (pass rate 100.0%)"]


def test_verbose_lists_every_case(repo: Path) -> None:
    _many_cases(repo, 60)
    proc = run_cli("run", "evals", "--verbose", cwd=repo)
    assert proc.returncode == EXIT_FAILED
    assert all(f"ok-{n:03}" in proc.stdout for n in range(60))
    assert "more passed" not in proc.stdout
    merged = run_cli("merge", ".agentv-gate/results.jsonl", "--output-dir", "merged", "--verbose", cwd=repo)
    assert merged.returncode == EXIT_FAILED
    assert all(f"ok-{n:03}" in merged.stdout for n in range(60))


def test_the_exit_codes_are_documented_in_one_table() -> None:
    """README's "Exit codes" table and action.yml's `exit-code` output name every code the CLI returns."""
    root = Path(__file__).resolve().parents[1]
    readme = DOCS
    table = readme.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d+)(?: / (\d+))? \|", table, re.MULTILINE)
    documented = {int(code) for pair in rows for code in pair if code}
    assert documented == set(EXIT_CODES)
    action = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))
    description = action["outputs"]["exit-code"]["description"]
    assert all(re.search(rf"\b{code}\b", description) for code in EXIT_CODES), description


def test_validate_quiet_and_verbose(repo: Path) -> None:
    (repo / "evals" / "s.eval.yaml").write_text(PASSING)
    quiet = run_cli("validate", "--quiet", "evals", cwd=repo)
    assert quiet.returncode == EXIT_OK and quiet.stdout == quiet.stderr == ""
    verbose = run_cli("validate", "--verbose", "evals", cwd=repo)
    assert verbose.returncode == EXIT_OK
    assert "evals/s.eval.yaml: 1 case(s)" in verbose.stderr and "ok: 1 case(s) in 1 file(s)" in verbose.stderr


def _imported(proc: subprocess.CompletedProcess[str]) -> set[str]:
    """The modules a CLI run imported, from Python's own `-X importtime` report on its stderr."""
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


def test_start_up_imports_only_what_the_command_needs(repo: Path) -> None:
    # `--version` and `--help` answer without pydantic or YAML; a run of `mock`/`cli` targets and code
    # judges never loads the HTTP stack (requests, urllib3, tenacity) nor the rate limiter.
    trace = {"PYTHONPROFILEIMPORTTIME": "1"}
    for args in (["--version"], ["run", "--help"]):
        proc = run_cli(*args, cwd=repo, env=trace)
        assert proc.returncode == EXIT_OK
        assert not _imported(proc) & {"pydantic", "yaml", "agentv_gate.models"}, args
    make_repo(repo, PARIS_TARGETS)
    (repo / "evals" / "judge.py").write_text("import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': 1}))\n")
    (repo / "evals" / "s.eval.yaml").write_text(
        "tests:\n  - id: a\n    input: q\n    assert:\n      - {type: contains, value: Paris}\n"
        "      - {type: code_judge, script: [python3, judge.py]}\n")
    proc = run_cli("run", "evals", cwd=repo, env=trace)
    assert proc.returncode == EXIT_OK, proc.stdout
    modules = _imported(proc)
    assert "agentv_gate.models" in modules  # the trace is read: a run does import the models
    assert not modules & {"requests", "urllib3", "tenacity", "agentv_gate.transport.http_policy",
                          "agentv_gate.transport.limiter"}
    assert not modules & {"html", "html.entities"}  # the reports escape with report.text.escape_html


def test_each_commands_help_lists_only_its_own_exit_codes_and_verbosity(tmp_path: Path) -> None:
    validate = run_cli("validate", "--help", cwd=tmp_path).stdout
    assert "every case passed" not in validate and "interrupted (SIGTERM)" not in validate, validate
    assert "--skip-missing-env" not in validate and "progress line" not in validate, validate
    assert re.search(r"^\s+1\s+.*problem", validate, re.MULTILINE), validate
    init = run_cli("init", "--help", cwd=tmp_path).stdout
    assert "every case passed" not in init and "a case failed" not in init, init
    run = run_cli("run", "--help", cwd=tmp_path).stdout
    assert "every case passed" in run and "interrupted (SIGTERM)" in run
    assert re.search(r"--output-dir OUTPUT_DIR\s+where results go \(default:\s+\.agentv-gate\)", run), run
    assert "how many trials a side detect" not in run_cli("--help", cwd=tmp_path).stdout


@pytest.mark.parametrize("word, suggestion", [("my-evals", None), ("valdate", "validate"), ("plan-trial", "plan-trials"),
                                              ("mrege", "merge")])
def test_an_unknown_command_close_to_one_is_refused_with_a_suggestion(tmp_path: Path, word: str,
                                                                       suggestion: str | None) -> None:
    proc = run_cli(word, cwd=tmp_path)
    if suggestion is None:  # close to no command: taken as a path for `run`, as before
        assert proc.returncode == EXIT_USAGE and "my-evals:0: no such file or folder" in proc.stderr, proc.stderr
        assert "unknown command" not in proc.stderr
        return
    assert proc.returncode == EXIT_USAGE, proc.stdout + proc.stderr
    assert f"unknown command '{word}', did you mean '{suggestion}'?" in proc.stderr, proc.stderr
    (tmp_path / word).mkdir()  # an existing path is a path
    assert "unknown command" not in run_cli(word, cwd=tmp_path).stderr
