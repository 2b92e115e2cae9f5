"""The composite action's entry point, run the way the runner runs it.

The runner gives a composite `run:` step its inputs as environment variables (action.yml maps each
input to `INPUT_*` through `env:`), plus files named by `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY`.
These tests do exactly that with real bash: first against a recording stand-in for the CLI, to pin
the input -> argv mapping and prove that no input is ever run as shell code, then against the real
`agentv-gate` for the outputs and the job summary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.helpers.github_runner import parse_github_output
from tests.helpers.suites import CAPITAL_SUITE as PASSING_SUITE
from tests.helpers.suites import PARIS_TARGETS as TARGETS
from tests.helpers.suites import RIVER_CASE

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "entrypoint.sh"
ACTION = ROOT / "action.yml"
VENV_BIN = Path(sys.executable).parent
Recorder = tuple[Path, Path]

FAILING_SUITE = PASSING_SUITE + RIVER_CASE


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str], output_file: Path, summary_file: Path):
        self.proc = proc
        self.code = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.outputs = parse_github_output(output_file.read_text())
        self.summary = summary_file.read_text()


def run_entrypoint(cwd: Path, inputs: dict[str, str], *, cli: Path | None = None,
                   env: dict[str, str] | None = None) -> Run:
    """bash entrypoint.sh with INPUT_* and the runner's files; `cli` replaces agentv-gate."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    output_file = cwd.parent / f"{cwd.name}-github-output"
    summary_file = cwd.parent / f"{cwd.name}-step-summary"
    output_file.write_text("")
    summary_file.write_text("")
    base.update({
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(output_file),
        "GITHUB_STEP_SUMMARY": str(summary_file),
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    })
    base.pop("AGENTV_GATE_BIN", None)
    if cli is not None:
        base["AGENTV_GATE_BIN"] = str(cli)
    for name, value in inputs.items():
        base[f"INPUT_{name.upper().replace('-', '_')}"] = value
    base.update(env or {})
    proc = subprocess.run(["bash", str(ENTRYPOINT)], cwd=cwd, env=base, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    return Run(proc, output_file, summary_file)


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    """A stand-in CLI that records its argv as JSON and exits with $FAKE_EXIT."""
    log = tmp_path / "argv.json"
    script = tmp_path / "fake-agentv-gate"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        with open({str(log)!r}, "w") as fh:
            json.dump(sys.argv[1:], fh)
        sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
        """))
    script.chmod(0o755)
    return script, log


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "work space"  # a space in the workspace path, as on some self-hosted runners
    ws.mkdir()
    return ws


# ----------------------------------------------------------------------- input -> argv mapping


def test_every_input_becomes_one_argv_element(workspace: Path, recorder: Recorder) -> None:
    cli, log = recorder
    run = run_entrypoint(workspace, {
        "paths": "evals/a b.yaml\n  evals/c.yaml  \n\n-dash.yaml\n",
        "threshold": "0.7", "targets": ".agentv/my targets.yaml", "target": "default", "workers": "3",
        "shard": "2/4", "output-dir": "out dir", "junit": "out dir/j.xml", "results": "r.jsonl",
        "extra-args": "--no-cache --judge-timeout 60 --repo-root 'root dir'",
    }, cli=cli)
    assert run.code == 0, run.stderr
    assert json.loads(log.read_text()) == [
        "run", "--threshold", "0.7", "--targets", ".agentv/my targets.yaml", "--target", "default",
        "--workers", "3", "--shard", "2/4", "--output-dir", "out dir", "--junit", "out dir/j.xml",
        "--results", "r.jsonl", "--no-cache", "--judge-timeout", "60", "--repo-root", "root dir",
        "--", "evals/a b.yaml", "evals/c.yaml", "-dash.yaml",
    ]
    assert run.outputs["exit-code"] == "0"


def test_empty_inputs_leave_the_cli_defaults(workspace: Path, recorder: Recorder) -> None:
    cli, log = recorder
    inputs = {"command": "", "paths": "", "threshold": "  ", "extra-args": ""}
    run = run_entrypoint(workspace, inputs, cli=cli)
    assert run.code == 0, run.stderr
    assert json.loads(log.read_text()) == ["run"]


def test_space_separated_paths_stay_one_path(workspace: Path, recorder: Recorder) -> None:
    """Several paths are given one per line; a line with spaces is a single path, never split."""
    cli, log = recorder
    run_entrypoint(workspace, {"paths": "evals/a b.yaml evals/c.yaml"}, cli=cli)
    assert json.loads(log.read_text()) == ["run", "--", "evals/a b.yaml evals/c.yaml"]


def test_cli_exit_code_is_the_step_result_and_an_output(workspace: Path, recorder: Recorder) -> None:
    cli, _ = recorder
    for code in (1, 2):
        run = run_entrypoint(workspace, {"paths": "evals"}, cli=cli, env={"FAKE_EXIT": str(code)})
        assert run.code == code
        assert run.outputs["exit-code"] == str(code)
    assert "configuration error" in run.summary  # the exit-2 run says so in the job summary


@pytest.mark.parametrize(("code", "heading"), [(3, "no eval cases found"), (4, "internal error")])
def test_no_cases_and_internal_errors_say_so_in_the_job_summary(workspace: Path, recorder: Recorder, code: int,
                                                                 heading: str) -> None:
    cli, _ = recorder
    run = run_entrypoint(workspace, {"paths": "evals"}, cli=cli, env={"FAKE_EXIT": str(code)})
    assert run.code == code and run.outputs["exit-code"] == str(code)
    assert f"### agentv-gate: {heading}" in run.summary and "configuration error" not in run.summary


def test_no_cases_with_the_real_cli(workspace: Path) -> None:
    (workspace / "docs").mkdir()
    run = run_entrypoint(workspace, {"paths": "docs"})
    assert run.code == 3 and run.outputs["exit-code"] == "3"
    assert "no eval cases found in docs" in run.stderr


def test_validate_gets_paths_and_targets_and_warns_about_run_inputs(workspace: Path, recorder: Recorder) -> None:
    """validate checks the target names cases use against `targets`: dropping it would check them
    against .agentv/targets.yaml, or not at all, and pass."""
    cli, log = recorder
    run = run_entrypoint(workspace, {"command": "validate", "paths": "evals", "threshold": "0.9",
                                     "targets": "config/targets.yaml", "extra-args": "--strict"}, cli=cli)
    assert run.code == 0, run.stderr
    assert json.loads(log.read_text()) == ["validate", "--targets", "config/targets.yaml", "--strict", "--", "evals"]
    warning = "::warning title=agentv-gate action::input threshold is ignored by the validate command"
    assert warning in run.stdout
    assert "input targets is ignored" not in run.stdout


def test_merge_expands_folders_to_their_results_files(workspace: Path, recorder: Recorder) -> None:
    cli, log = recorder
    shards = workspace / "shards"
    for name in ("agentv-gate-shard-2", "agentv-gate-shard-1"):
        (shards / name).mkdir(parents=True)
        (shards / name / "results.jsonl").write_text("{}\n")
    (shards / "notes.txt").write_text("not a results file")
    (workspace / "extra.jsonl").write_text("{}\n")
    run = run_entrypoint(workspace, {"command": "merge", "paths": "shards\nextra.jsonl",
                                     "output-dir": "merged", "junit": "merged/junit.xml",
                                     "results": "merged/all.jsonl", "baseline": "base.jsonl",
                                     "fail-on": "regression"}, cli=cli)
    assert run.code == 0, run.stderr
    assert json.loads(log.read_text()) == [
        "merge", "--output-dir", "merged", "--junit", "merged/junit.xml", "--results-out", "merged/all.jsonl",
        "--baseline", "base.jsonl", "--fail-on", "regression",
        "--", "shards/agentv-gate-shard-1/results.jsonl", "shards/agentv-gate-shard-2/results.jsonl",
        "extra.jsonl",
    ]


@pytest.mark.parametrize("inputs, message", [
    ({"command": "merge", "paths": ""}, "merge needs the shards' results files"),
    ({"command": "merge", "paths": "empty"}, "no results *.jsonl files found under 'empty'"),
    ({"command": "deploy"}, "unknown command 'deploy'"),
    # the shards applied their threshold; a merge step's own would be a gate that never ran
    ({"command": "merge", "paths": "x.jsonl", "threshold": "0.8"}, "input threshold does not reach a merge"),
    ({"extra-args": "--target 'unterminated"}, "extra-args has unbalanced quotes"),
])
def test_bad_inputs_are_usage_errors_before_anything_runs(workspace: Path, recorder: Recorder,
                                                          inputs: dict[str, str], message: str) -> None:
    cli, log = recorder
    (workspace / "empty").mkdir()
    run = run_entrypoint(workspace, inputs, cli=cli)
    assert run.code == 2
    assert not log.exists(), "the CLI must not be started"
    assert message in run.stderr
    assert run.outputs["exit-code"] == "2"
    assert "configuration error" in run.summary
    assert any(line.startswith("::error title=agentv-gate action::") for line in run.stdout.splitlines())


# ----------------------------------------------------------------------- no input is shell code


INJECTIONS = [
    "; touch {m}/semicolon",
    "$(touch {m}/dollar)",
    "`touch {m}/backtick`",
    "| touch {m}/pipe",
    "&& touch {m}/and",
    "\ntouch {m}/newline\n",
    "${{IFS}}$(touch${{IFS}}{m}/ifs)",
    "*",
]


@pytest.mark.parametrize("payload", INJECTIONS)
def test_inputs_are_never_executed(workspace: Path, tmp_path: Path, recorder: Recorder,
                                   payload: str) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    text = payload.format(m=markers)
    (workspace / "decoy.yaml").write_text("glob bait")  # `*` must not expand to it
    cli, log = recorder
    inputs = {name: text for name in ("paths", "threshold", "targets", "target", "workers", "shard",
                                      "output-dir", "junit", "results")}
    inputs["extra-args"] = f"--quiet {text}" if "\n" not in text else text
    run = run_entrypoint(workspace, inputs, cli=cli)
    assert list(markers.iterdir()) == [], f"an input was executed: {run.stderr}"
    argv = json.loads(log.read_text())
    assert "decoy.yaml" not in argv
    # Single-valued inputs arrive whole (trimmed), so the payload reaches the CLI as plain data.
    assert argv[argv.index("--threshold") + 1] == text.strip()


def test_injection_reaches_the_real_cli_as_data(workspace: Path, tmp_path: Path) -> None:
    """With the real CLI the odd arguments are a usage error (exit 2) and still nothing runs."""
    markers = tmp_path / "markers"
    markers.mkdir()
    run = run_entrypoint(workspace, {
        "paths": f"evals/$(touch {markers}/p)",
        "extra-args": f"--quiet; touch {markers}/a $(touch {markers}/b) `touch {markers}/c`",
    })
    assert run.code == 2
    assert list(markers.iterdir()) == []
    assert run.outputs["exit-code"] == "2"


def test_log_lines_cannot_carry_workflow_commands(workspace: Path, recorder: Recorder) -> None:
    """An input with a newline or `##[` cannot make the runner see a command in the log."""
    cli, _ = recorder
    evil = "x\n::add-mask::secret\n##[set-output name=pass-rate;]1"
    run = run_entrypoint(workspace, {"command": evil}, cli=cli)
    assert run.code == 2
    for line in (run.stdout + run.stderr).splitlines():
        assert not line.startswith("::add-mask"), line
        assert "##[" not in line, line
    run = run_entrypoint(workspace, {"paths": evil}, cli=cli)
    assert run.code == 0
    for line in (run.stdout + run.stderr).splitlines():
        assert not line.startswith("::add-mask"), line
        assert "##[" not in line, line


# ----------------------------------------------------------------------- with the real CLI


def _suite(ws: Path, text: str) -> None:
    (ws / ".agentv").mkdir(exist_ok=True)
    (ws / ".agentv" / "targets.yaml").write_text(TARGETS)
    (ws / "evals").mkdir(exist_ok=True)
    (ws / "evals" / "geo.yaml").write_text(text)


def test_validate_with_the_real_cli(workspace: Path) -> None:
    _suite(workspace, PASSING_SUITE)
    assert run_entrypoint(workspace, {"command": "validate"}).code == 0
    (workspace / "evals" / "broken.yaml").write_text("tests:\n  - id: x\n    assertions: 7\n")
    run = run_entrypoint(workspace, {"command": "validate", "paths": "evals"})
    assert run.code == 1
    assert "broken.yaml" in run.stdout + run.stderr
    assert run.outputs["exit-code"] == "1"


def test_passing_run_sets_outputs_and_summary(workspace: Path) -> None:
    _suite(workspace, PASSING_SUITE)
    inputs = {"paths": "evals", "targets": ".agentv/targets.yaml", "output-dir": "out dir"}
    run = run_entrypoint(workspace, inputs)
    assert run.code == 0, run.stderr
    out = run.outputs
    assert out["exit-code"] == "0"
    assert (out["total"], out["failed"], out["errors"]) == ("1", "0", "0")
    assert float(out["pass-rate"]) == 1.0
    junit = workspace / out["junit-path"]  # absolute stays absolute
    assert junit.is_file() and junit.parent.name == "out dir"
    assert "capital" in junit.read_text()
    assert Path(workspace, out["results-path"]).is_file()
    assert "agentv-gate" in run.summary.lower()


def test_every_output_the_gate_step_writes_is_declared(workspace: Path) -> None:
    """An output written but not declared in action.yml cannot be read by the workflow."""
    _suite(workspace, FAILING_SUITE)
    run = run_entrypoint(workspace, {"targets": ".agentv/targets.yaml"})
    assert run.code == 1, run.stderr
    assert set(run.outputs) <= set(_action()["outputs"]), set(run.outputs) - set(_action()["outputs"])
    assert run.outputs["passed"] == "1"


def test_report_paths_work_from_the_workspace_root_in_a_monorepo(workspace: Path) -> None:
    """With `working-directory: services/agent`, the publish step (which runs at the workspace root)
    must find the files at the paths the outputs give."""
    service = workspace / "services" / "agent"
    service.mkdir(parents=True)
    _suite(service, PASSING_SUITE)
    run = run_entrypoint(service, {"paths": "evals", "junit": "reports/junit.xml"},
                         env={"GITHUB_WORKSPACE": str(workspace)})
    assert run.code == 0, run.stderr
    out = run.outputs
    assert out["junit-path"] == "services/agent/reports/junit.xml"
    assert out["results-path"] == "services/agent/.agentv-gate/results.jsonl"
    assert out["report-path"] == "services/agent/reports/report.html"
    for name in ("junit-path", "results-path", "report-path"):
        assert (workspace / out[name]).is_file(), name
    assert "services/agent/reports/junit.xml" in run.summary


def test_a_configuration_error_is_annotated_and_summarised_by_the_cli(workspace: Path) -> None:
    _suite(workspace, PASSING_SUITE + "      - type: nonsense\n")
    run = run_entrypoint(workspace, {"paths": "evals"}, env={"GITHUB_WORKSPACE": str(workspace)})
    assert run.code == 2 and run.outputs["exit-code"] == "2"
    assert any(line.startswith("::error file=evals/geo.yaml,line=") and "nonsense" in line
               for line in run.stdout.splitlines()), run.stdout
    assert "evals/geo.yaml:" in run.summary and "unknown evaluator type 'nonsense'" in run.summary
    assert "the log of this step says why" not in run.summary
    assert run.summary.count("### agentv-gate: configuration error") == 1


def test_validate_writes_a_job_summary(workspace: Path) -> None:
    _suite(workspace, PASSING_SUITE)
    run = run_entrypoint(workspace, {"command": "validate"})
    assert run.code == 0, run.stderr
    assert "1 file, 1 case valid" in run.summary


def test_failing_run_fails_the_step_with_annotations(workspace: Path) -> None:
    _suite(workspace, FAILING_SUITE)
    run = run_entrypoint(workspace, {"targets": ".agentv/targets.yaml", "junit": "reports/junit.xml"})
    assert run.code == 1
    out = run.outputs
    assert out["exit-code"] == "1"
    assert (out["total"], out["failed"]) == ("2", "1")
    assert float(out["pass-rate"]) == 0.5
    assert (workspace / "reports" / "junit.xml").is_file()
    assert any(line.startswith("::error") and "river" in line for line in run.stdout.splitlines())
    assert "river" in run.summary


def test_sharded_runs_merge_into_one_verdict(workspace: Path) -> None:
    """The matrix recipe of examples/workflows/agentv-gate-sharded.yml, minus the artifact transfer."""
    _suite(workspace, FAILING_SUITE)
    codes = []
    for k in (1, 2):
        run = run_entrypoint(workspace, {"targets": ".agentv/targets.yaml", "shard": f"{k}/2",
                                         "output-dir": f"shards/agentv-gate-shard-{k}"})
        codes.append(run.code)
        assert run.outputs["total"] == "1"
    assert sorted(codes) == [0, 1]  # one case each; only the river shard fails
    merged = run_entrypoint(workspace, {"command": "merge", "paths": "shards", "output-dir": "merged"})
    assert merged.code == 1, merged.stderr
    assert (merged.outputs["total"], merged.outputs["failed"]) == ("2", "1")
    junit = (workspace / "merged" / "junit.xml").read_text()
    assert "capital" in junit and "river" in junit


# ----------------------------------------------------------------------- action.yml itself


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def test_action_passes_inputs_only_through_env() -> None:
    """`${{ inputs.* }}` inside a `run:` script would be a script-injection hole."""
    action = _action()
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    for step in steps:
        assert "inputs." not in step.get("run", ""), step
        assert "${{" not in step.get("run", ""), step
    gate = next(s for s in steps if s.get("id") == "gate")
    mapped = {k: v for k, v in gate["env"].items() if k.startswith("INPUT_")}
    handled = {"python-version", "working-directory"}  # used by the steps themselves
    # The token reaches only the comment step, which runs after the suites' step and runs no judge.
    handled.add("github-token")
    assert not any("github-token" in str(value) or "TOKEN" in name for name, value in gate["env"].items())
    [poster] = [s for s in steps if "AGENTV_GATE_GITHUB_TOKEN" in s.get("env", {})]
    assert poster["env"]["AGENTV_GATE_GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    assert poster["env"]["AGENTV_GATE_STEP"] == "comment" and steps.index(poster) > steps.index(gate)
    assert "inputs.comment == 'true'" in poster["if"] and "!cancelled()" in poster["if"]
    assert all("github-token" not in str(s.get("env", {})) for s in steps if s is not poster)
    for name in action["inputs"]:
        if name in handled:
            continue
        key = f"INPUT_{name.upper().replace('-', '_')}"
        assert mapped.get(key) == f"${{{{ inputs.{name} }}}}", name
        assert key in ENTRYPOINT.read_text(), f"{key} is mapped but entrypoint.sh never reads it"
    assert "entrypoint.sh" in gate["run"]


def test_action_outputs_come_from_the_gate_step() -> None:
    outputs = _action()["outputs"]
    expected = {"pass-rate", "total", "passed", "failed", "errors", "quarantined", "advisory", "not-run", "junit-path",
                "results-path", "report-path", "exit-code"}
    assert set(outputs) == expected
    for name, spec in outputs.items():
        assert spec["value"] == f"${{{{ steps.gate.outputs.{name} }}}}"


def test_action_installs_its_own_package_from_the_action_path() -> None:
    install = next(s for s in _action()["runs"]["steps"] if s.get("id") == "install")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert 'pip install' in install["run"] and '"$ACTION_PATH"' in install["run"]


def test_install_step_script_runs(tmp_path: Path) -> None:
    """The install step's own bash, run against this checkout (pip reuses the machine's cache)."""
    install = next(s for s in _action()["runs"]["steps"] if s.get("id") == "install")
    venv = tmp_path / "venv"
    output = tmp_path / "out"
    output.write_text("")
    (venv).mkdir()
    (venv / ".agentv-gate-source").write_text(str(ROOT))  # already installed: the step must skip pip
    env = {**os.environ, "ACTION_PATH": str(ROOT), "VENV": str(venv), "GITHUB_OUTPUT": str(output)}
    proc = subprocess.run(["bash", "-e", "-c", install["run"]], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert parse_github_output(output.read_text()) == {"bin": f"{venv}/bin/agentv-gate"}
    assert not (venv / "bin").exists()


def _python_stub(path: Path, log: Path, pip_takes_python: bool = True) -> Path:
    """A stand-in `python` that logs its argv; `-m venv ... DIR` makes DIR/bin/python, a logging stub
    too. Its `-m pip --python` fails unless `pip_takes_python` (no pip, or one older than 22.3)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(f"""\
        #!/usr/bin/env bash
        printf '%s\\n' "$0 $*" >>{str(log)!r}
        if [[ $1 == -m && $2 == venv ]]; then
          mkdir -p "${{@: -1}}/bin" && cp "$0" "${{@: -1}}/bin/python"
        fi
        if [[ $1 == -m && $2 == pip && $3 == --python ]]; then
          {"exit 0" if pip_takes_python else "exit 2"}
        fi
        """))
    path.chmod(0o755)
    return path


def test_a_real_install_gives_the_virtualenv_no_pip_of_its_own_and_runs(tmp_path: Path) -> None:
    """The install step's bash with the real python3 and pip, on a copy of this checkout (as the
    runner's copy of the action): the builder's pip installs into a virtualenv made without one."""
    action = tmp_path / "action"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            (action / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, action / name)
    install = next(s for s in _action()["runs"]["steps"] if s.get("id") == "install")
    venv, output = tmp_path / "venv", tmp_path / "out"
    output.write_text("")
    env = {**os.environ, "ACTION_PATH": str(action), "VENV": str(venv), "GITHUB_OUTPUT": str(output), "PYTHON": ""}
    proc = subprocess.run(["bash", "-e", "-c", install["run"]], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    version = subprocess.run([str(venv / "bin/agentv-gate"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("agentv-gate "), version.stderr
    assert not (venv / "bin/pip").exists()
    assert (venv / ".agentv-gate-source").read_text() == str(action)


@pytest.mark.parametrize("setup_python", [True, False], ids=["python-version set", "python-version empty"])
def test_the_private_virtualenv_comes_from_setup_pythons_output_not_path(tmp_path: Path, setup_python: bool) -> None:
    """setup-python runs with `update-environment: false`, so the job's python3 stays first on PATH
    for the agent and its judges; only agentv-gate's own virtualenv is built from its python-path."""
    steps = _action()["runs"]["steps"]
    setup = next(s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python"))
    assert setup["with"]["update-environment"] is False and setup["if"] == "inputs.python-version != ''"
    install = next(s for s in steps if s.get("id") == "install")
    assert install["env"]["PYTHON"] == f"${{{{ steps.{setup['id']}.outputs.python-path }}}}"

    log = tmp_path / "log"
    job_python = _python_stub(tmp_path / "job-bin" / "python3", log)
    setup_output = _python_stub(tmp_path / "toolcache" / "python3", log) if setup_python else None
    output = tmp_path / "out"
    output.write_text("")
    env = {**os.environ, "ACTION_PATH": str(ROOT), "VENV": str(tmp_path / "venv"), "GITHUB_OUTPUT": str(output),
           "PYTHON": str(setup_output or ""), "PATH": f"{job_python.parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-e", "-c", install["run"]], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    builder, venv_python = setup_output or job_python, tmp_path / "venv" / "bin" / "python"
    assert calls[0] == f"{builder} -m venv --without-pip {tmp_path / 'venv'}"
    assert calls[1] == f"{builder} -m pip --python {venv_python} --version"
    assert calls[2].startswith(f"{builder} -m pip --python {venv_python} install") and calls[2].endswith(str(ROOT))
    assert len(calls) == 3


def test_a_builder_whose_pip_cannot_install_elsewhere_gives_the_virtualenv_its_own(tmp_path: Path) -> None:
    log = tmp_path / "log"
    builder = _python_stub(tmp_path / "toolcache" / "python3", log, pip_takes_python=False)
    output = tmp_path / "out"
    output.write_text("")
    install = next(s for s in _action()["runs"]["steps"] if s.get("id") == "install")
    env = {**os.environ, "ACTION_PATH": str(ROOT), "VENV": str(tmp_path / "venv"), "GITHUB_OUTPUT": str(output),
           "PYTHON": str(builder)}
    proc = subprocess.run(["bash", "-e", "-c", install["run"]], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    venv_python = tmp_path / "venv" / "bin" / "python"
    assert log.read_text().splitlines()[2:] == [f"{venv_python} -m ensurepip --default-pip",
                                                f"{venv_python} -m pip install --quiet --disable-pip-version-check {ROOT}"]


# ----------------------------------------------------------------------- supported runners


@pytest.mark.parametrize(("runner_os", "runs"), [("Linux", True), ("macOS", True), ("", True),
                                                 ("Windows", False), ("FreeBSD", False)])
def test_the_entrypoint_runs_on_linux_and_macos_and_stops_at_once_elsewhere(
        workspace: Path, recorder: Recorder, runner_os: str, runs: bool) -> None:
    cli, log = recorder
    run = run_entrypoint(workspace, {"paths": "evals"}, cli=cli, env={"RUNNER_OS": runner_os})
    if runs:
        assert run.code == 0, run.stderr
        assert json.loads(log.read_text()) == ["run", "--", "evals"]
        return
    assert run.code == 2 and run.outputs["exit-code"] == "2"
    assert not log.exists(), "nothing is run on a runner the action does not support"
    error = next(line for line in run.stdout.splitlines() if line.startswith("::error "))
    assert "Linux" in error and "macOS" in error and runner_os in error
    assert "configuration error" in run.summary


def test_the_action_checks_the_runner_before_anything_is_installed() -> None:
    """The first step runs the entrypoint (which stops with its message) wherever it would refuse."""
    steps = _action()["runs"]["steps"]
    check = steps[0]
    assert check["if"] == "runner.os != 'Linux' && runner.os != 'macOS'"
    assert check["run"] == 'bash "$GITHUB_ACTION_PATH/entrypoint.sh"'
    assert [s.get("id") for s in steps[1:]] == ["python", "install", "gate", "comment"]
