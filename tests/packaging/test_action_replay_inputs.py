"""The action's `affected`, `record`, `record-judges` and `replay` inputs, as entrypoint.sh passes them on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.packaging.test_action import Recorder, recorder, run_entrypoint, workspace  # noqa: F401 - fixtures


def test_affected_takes_the_baseline_and_the_recording_inputs_become_flags(workspace: Path,  # noqa: F811
                                                                           recorder: Recorder) -> None:  # noqa: F811
    cli, log = recorder
    run = run_entrypoint(workspace, {"baseline": "base/results.jsonl", "affected": "true", "replay": "base/rec dir",
                                     "paths": "evals"}, cli=cli)
    assert run.code == 0, run.stderr
    assert json.loads(log.read_text()) == ["run", "--baseline", "base/results.jsonl", "--affected-since",
                                           "base/results.jsonl", "--replay", "base/rec dir", "--", "evals"]
    run = run_entrypoint(workspace, {"record": "rec", "record-judges": "true"}, cli=cli)
    assert json.loads(log.read_text()) == ["run", "--record", "rec", "--record-judges"]
    run = run_entrypoint(workspace, {"record": "rec", "record-judges": "false", "affected": "false"}, cli=cli)
    assert json.loads(log.read_text()) == ["run", "--record", "rec"]


def test_affected_without_a_baseline_runs_everything_and_says_so(workspace: Path,  # noqa: F811
                                                                 recorder: Recorder) -> None:  # noqa: F811
    cli, log = recorder
    run = run_entrypoint(workspace, {"affected": "true"}, cli=cli)
    assert run.code == 0 and json.loads(log.read_text()) == ["run"]
    assert "::notice title=agentv-gate action::input affected: no baseline to compare with, so every case runs" \
        in run.stdout


def test_a_switch_that_is_not_true_or_false_is_refused(workspace: Path, recorder: Recorder) -> None:  # noqa: F811
    cli, log = recorder
    for name in ("affected", "record-judges"):
        run = run_entrypoint(workspace, {name: "yes"}, cli=cli)
        assert run.code == 2 and not log.exists()
        assert f"input {name} is 'yes': expected true or false" in run.stdout + run.stderr
