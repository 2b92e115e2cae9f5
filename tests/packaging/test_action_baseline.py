"""The action's `baseline` and `fail-on` inputs, and the example workflow that gates pull requests on regressions.

The workflow is played the way the runner would play it: its steps' `run:` scripts in bash with
`$GITHUB_OUTPUT`, the action's step through entrypoint.sh with the `with:` values (their
`${{ steps.*.outputs.* }}` filled in from the earlier steps' outputs), and the Actions cache as a
folder that main's job saves to and a pull request's job restores from.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import parse_github_output
from tests.helpers.suites import CAPITAL_SUITE, PARIS_TARGETS, RIVER_CASE
from tests.packaging.test_action import ROOT, Recorder, recorder, run_entrypoint  # noqa: F401 - fixture

WORKFLOW = ROOT / "examples" / "workflows" / "agentv-gate-regressions.yml"
SUITE = CAPITAL_SUITE + RIVER_CASE
SEINE_TARGETS = PARIS_TARGETS.replace("Paris is the capital of France.", "Paris is the capital; the Seine flows there.")
LOIRE_TARGETS = PARIS_TARGETS.replace("Paris is the capital of France.", "The Loire.")


def test_baseline_and_fail_on_inputs_reach_the_cli(tmp_path: Path, recorder: Recorder) -> None:  # noqa: F811
    cli, log = recorder
    run = run_entrypoint(tmp_path, {"baseline": " base/results.jsonl ", "fail-on": "regression"}, cli=cli)
    assert run.code == 0, run.stderr
    assert json.loads(log.read_text()) == ["run", "--baseline", "base/results.jsonl", "--fail-on", "regression"]


def test_validate_warns_that_it_ignores_baseline(tmp_path: Path, recorder: Recorder) -> None:  # noqa: F811
    cli, log = recorder
    run = run_entrypoint(tmp_path, {"command": "validate", "baseline": "base.jsonl"}, cli=cli)
    assert json.loads(log.read_text()) == ["validate"]
    assert "input baseline is ignored by the validate command" in run.stdout


@pytest.mark.parametrize("command", ["run", "merge"])
def test_the_comment_input_posts_from_the_results_in_a_step_of_its_own(tmp_path: Path, recorder: Recorder,  # noqa: F811
                                                                      command: str) -> None:
    """The suites' step never comments (it has no token); the comment step runs `comment` on the
    results with the options that decide the verdict and name the comment, and nothing else."""
    cli, log = recorder
    paths = "shard.jsonl" if command == "merge" else "evals\nmore evals"
    inputs = {"command": command, "comment": "true", "paths": paths, "baseline": "base.jsonl",
              "fail-on": "regression", "extra-args": "--no-cache --max-drop 0.1 --alpha=0.01 --trials 3 --max-trials 60 "
              "--history=main.jsonl"
              + (" --suite 'geo*' --tag fast --exclude-tag=slow" if command == "run" else "")}
    run = run_entrypoint(tmp_path, inputs, cli=cli)
    assert run.code == 0, run.stderr
    assert "--comment" not in json.loads(log.read_text())
    post = run_entrypoint(tmp_path, inputs, cli=cli, env={"AGENTV_GATE_STEP": "comment",
                                                         "AGENTV_GATE_RESULTS": "out/results.jsonl",
                                                         "GITHUB_WORKSPACE": str(tmp_path)})
    assert post.code == 0, post.stderr
    expected = ["comment", "--baseline", "base.jsonl", "--fail-on", "regression", "--max-drop", "0.1", "--alpha=0.01",
                "--max-trials", "60", "--history=main.jsonl"]
    if command == "run":
        expected += ["--suite", "geo*", "--tag", "fast", "--exclude-tag=slow", "--", f"{tmp_path}/out/results.jsonl",
                     "evals", "more evals"]
    else:
        expected += ["--", f"{tmp_path}/out/results.jsonl"]
    assert json.loads(log.read_text()) == expected


def test_a_comment_input_that_is_not_true_or_false_is_refused(tmp_path: Path, recorder: Recorder) -> None:  # noqa: F811
    cli, log = recorder
    run = run_entrypoint(tmp_path, {"comment": "yes please"}, cli=cli)
    assert run.code == 2 and "input comment is 'yes please': expected true or false" in run.stderr
    assert not log.exists()


# ---------------------------------------------------------------- the example workflow, played


def _steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    return list(workflow["jobs"]["evals"]["steps"])


def _step(key: str, value: str) -> dict[str, Any]:
    return next(s for s in _steps() if str(s.get(key, "")).startswith(value))


def _fill(text: str, outputs: dict[str, dict[str, str]]) -> str:
    """`${{ steps.ID.outputs.NAME }}` as the runner fills it: the output, or '' for a skipped step."""
    filled = re.sub(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}",
                    lambda m: outputs.get(m.group(1), {}).get(m.group(2), ""), text)
    assert "${{" not in filled, filled
    return filled


def _run_script(step: dict[str, Any], cwd: Path, env: dict[str, str]) -> dict[str, str]:
    output = cwd.parent / "script-output"
    output.write_text("")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**base, **env, "GITHUB_OUTPUT": str(output)})
    assert proc.returncode == 0, proc.stderr
    return parse_github_output(output.read_text())


def _checkout(root: Path, targets: str) -> Path:
    make_repo(root, targets)
    write(root / "evals" / "capital.eval.yaml", SUITE)
    return root


def _play(workspace: Path, event: str, cache: Path) -> Any:
    """One job of the workflow for a `push` to main or a `pull_request`; returns the gate step's run."""
    outputs: dict[str, dict[str, str]] = {}
    if event == "pull_request":
        restore = _step("uses", "actions/cache/restore@")
        if cache.exists():
            shutil.copytree(cache, workspace / restore["with"]["path"])
        outputs["base"] = _run_script(_step("id", "base"), workspace, {})
    gate = _step("id", "gate")
    # The runner passes a YAML boolean as `true` / `false`, as expressions print them
    inputs = {name: _fill(str(value).lower() if isinstance(value, bool) else str(value), outputs)
              for name, value in gate["with"].items()}
    run = run_entrypoint(workspace, inputs)
    outputs["gate"] = run.outputs
    if event == "push":
        keep = _step("name", "Keep main's results")
        env = {name: _fill(str(value), outputs) for name, value in keep["env"].items()}
        _run_script(keep, workspace, env)
        save = _step("uses", "actions/cache/save@")
        shutil.copytree(workspace / save["with"]["path"], cache)
    return run


def test_pull_request_gates_on_regressions_against_mains_results(tmp_path: Path) -> None:
    cache = tmp_path / "actions-cache"
    # main: the agent knows the capital, not the river; the job fails, its results are kept anyway.
    main = _play(_checkout(tmp_path / "main", PARIS_TARGETS), "push", cache)
    assert main.code == 1
    assert (cache / "results.jsonl").is_file()

    # A pull request that changes nothing the cases see: river still fails, as on main. Green.
    same = _play(_checkout(tmp_path / "pr-same", PARIS_TARGETS), "pull_request", cache)
    assert same.code == 0, same.stdout + same.stderr
    assert "| still failing (also on base) | river |" in same.summary
    assert "no case regressed" in same.summary
    assert any(line.startswith("::warning ") and "river" in line for line in same.stdout.splitlines())

    # A pull request that fixes the river: labelled fixed, green.
    fixed = _play(_checkout(tmp_path / "pr-fixed", SEINE_TARGETS), "pull_request", cache)
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    assert "| fixed | river |" in fixed.summary

    # A pull request that breaks the capital: a regression, red, annotated as such.
    broken = _play(_checkout(tmp_path / "pr-broken", LOIRE_TARGETS), "pull_request", cache)
    assert broken.code == 1
    assert broken.outputs["exit-code"] == "1"
    assert "| regressed | capital |" in broken.summary
    assert any(line.startswith("::error ") and "capital failed (regressed)" in line
               for line in broken.stdout.splitlines())


def test_pull_request_without_mains_results_needs_every_case_to_pass(tmp_path: Path) -> None:
    run = _play(_checkout(tmp_path / "pr", PARIS_TARGETS), "pull_request", tmp_path / "empty-cache")
    assert run.code == 1  # river fails and there is nothing to call it "still failing" against
    assert "Against the base results" not in run.summary
