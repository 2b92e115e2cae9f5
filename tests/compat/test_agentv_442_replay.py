"""AgentV 4.42.4's recorded results on its own examples, replayed against agentv-gate without node (issues 33, 43).

`compat/agentv_4_42/run_differential.py --record` ran each example eval file with the real AgentV 4.42.4,
both tools with their own defaults, and kept, per case, AgentV's score, verdict (pass / fail / error) and
evaluators (name, type, hits, misses) in tests/compat/agentv-4.42/expected.json, with AgentV's version and a
hash of each example's files. This test runs the gate on the same files, prepared the same way (AgentV's root
`.agentv/`, the loopback model, the `@agentv/sdk` stand-in, the `uv` shim) and with no flag AgentV was not
given, and asks for AgentV's score and verdict on every case, and its evaluators' names, types and assertion
texts (`harness.grader_differences`; an error's text aside, a documented difference), or, for a case listed in
known-differences.json with its cause, exactly the values listed there: a known difference that changes fails
here too. An example whose files changed since the recording is skipped, saying so, and so is the whole test
when ../shared/agentv is not beside the repository. TypeScript graders need `bun`: without it their suites are
skipped by name.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from compat.agentv_4_42 import run_differential as harness
from compat.agentv_4_42.fake_model import FakeModel
from tests.helpers.cli import run_cli

EXPECTED = Path(__file__).with_name("agentv-4.42") / "expected.json"
KNOWN = Path(__file__).with_name("agentv-4.42") / "known-differences.json"
EXAMPLES = harness.shared_root() / f"examples-{harness.VERSION}"

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} is not here (../shared/agentv is missing)")


def _needs_bun(suite: Path) -> bool:
    """A TypeScript grader, or an agent run with bun (its folder's targets.yaml), with no bun here."""
    if shutil.which("bun") is not None:
        return False
    texts = [suite.read_text(errors="replace")]
    texts += [found.read_text(errors="replace") for folder in suite.parents
              if (found := folder / ".agentv" / "targets.yaml").is_file()]
    return any(".ts" in text or "bun " in text for text in texts)


def _own_targets(suite: Path, tree: Path) -> bool:
    """A targets file of the suite's own, below the tree's root (AgentV's root `.agentv/` is everyone's)."""
    return any((folder / ".agentv" / "targets.yaml").is_file() for folder in [suite.parent, *suite.parents]
               if tree in folder.parents)


def _targets(suite: Path, tree: Path, out: Path) -> Path:
    return harness.targets_for(suite, tree, out)


def _replay(tree: Path, work: Path, env: dict[str, str], rels: list[str], targets: Path) -> dict[str, dict[str, Any]]:
    """One gate run over `rels` (suites sharing `targets`): (suite -> case -> row), as the harness reads rows."""
    out = work / "out" / hashlib.sha256("|".join(rels).encode()).hexdigest()[:12]
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([str(harness.GATE), "run", *(str(tree / rel) for rel in rels), "--targets", str(targets),
                    "--output-dir", str(out), "--no-cache", "--workers", "16", "-q"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=harness.SUITE_TIMEOUT,
                          stdin=subprocess.DEVNULL)
    rows: dict[str, dict[str, Any]] = {rel: {} for rel in rels}
    results = out / "results.jsonl"
    assert results.is_file(), f"the gate wrote no results (exit {done.returncode}): {done.stderr[-3000:]}"
    for line in results.read_text().splitlines() if results.is_file() else []:
        row = json.loads(line)
        if row.get("suite") in rows:
            rows[row["suite"]].update(harness.gate_rows_of([row]))  # by id, and by id@target for a matrix
    return rows


def _fresh(work: Path, rel: str) -> Path:
    folder = work / "targets" / rel.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_every_recorded_case_has_agentv_4_42s_score_and_verdict_or_a_known_difference(tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text())
    assert expected["agentv"] == harness.VERSION
    tree = harness.prepare_tree(tmp_path)
    suites = {rel: data for rel, data in expected["suites"].items()
              if harness.inputs_hash(tree / rel) == data["inputs_sha256"] and not _needs_bun(tree / rel)}
    known = json.loads(KNOWN.read_text())
    suites = {rel: data for rel, data in suites.items() if rel not in known["refused"]}
    known_cases = {rel: entry["cases"] for rel, entry in known["cases"].items()}
    skipped = sorted(set(expected["suites"]) - set(suites))
    assert len(suites) >= len(expected["suites"]) // 2, f"most recorded examples changed or need bun: {skipped}"
    shared = [rel for rel in suites if not _own_targets(tree / rel, tree)]
    groups: list[tuple[list[str], Path]] = []
    if shared:  # the suites that name only the loopback model's targets share one targets file and one run
        union = tmp_path / "shared"
        union.mkdir()
        fake = [_targets(tree / rel, tree, _fresh(tmp_path, rel)) for rel in shared]
        entries = {t["name"]: t for path in fake for t in yaml.safe_load(path.read_text())["targets"]}
        (union / "targets.yaml").write_text(yaml.safe_dump({"targets": list(entries.values())}, sort_keys=False))
        groups.append((shared, union / "targets.yaml"))
    groups += [([rel], _targets(tree / rel, tree, _fresh(tmp_path, rel))) for rel in suites if rel not in shared]
    got: dict[str, dict[str, Any]] = {}
    with FakeModel() as model:
        env = harness.environment(tmp_path, model.url, None)
        with ThreadPoolExecutor(max_workers=2) as pool:
            for rows in pool.map(lambda group: _replay(tree, tmp_path, env, *group), groups):
                got.update(rows)
    differences = []
    for rel, data in suites.items():
        for case, want in data["cases"].items():
            have = harness.gate_row_for(got[rel], case, want) or {}  # AgentV's target's row, for a matrix
            known = known_cases.get(rel, {}).get(case)
            expect = known or want
            if have.get("score") != expect["score"] or have.get("verdict") != expect["verdict"]:
                differences.append(f"{rel} {case}: {'known difference changed, ' if known else ''}expected "
                                   f"{expect['score']} {expect['verdict']} (AgentV {want['score']} "
                                   f"{want['verdict']}), agentv-gate {have.get('score')} {have.get('verdict')}")
            elif "error" not in (want["verdict"], have.get("verdict")):  # an error's text is a documented difference
                graders = (known or {}).get("graders", want.get("graders") or [])
                found = harness.grader_differences(graders, have.get("graders") or [])
                if found:
                    changed = "known difference changed, " if known and "graders" in known else ""
                    differences.append(f"{rel} {case}: {changed}" + "; ".join(found))
    assert not differences, "\n".join(differences)


def test_files_agentv_runs_offline_and_the_gate_refuses_are_the_known_ones(tmp_path: Path) -> None:
    """Each refusal is listed with its cause; one no longer refused (or a new one) fails here until the table
    in known-differences.json says so."""
    expected = json.loads(EXPECTED.read_text())
    known = json.loads(KNOWN.read_text())["refused"]
    tree = harness.prepare_tree(tmp_path)
    refused: dict[str, str] = {}
    for rel in expected["suites"]:
        if harness.inputs_hash(tree / rel) != expected["suites"][rel]["inputs_sha256"]:
            continue
        targets = _targets(tree / rel, tree, _fresh(tmp_path, rel))
        done = run_cli("validate", str(tree / rel), "--targets", str(targets), cwd=tree, timeout=harness.SUITE_TIMEOUT)
        if done.returncode != 0:
            refused[rel] = done.stdout + done.stderr
    assert sorted(refused) == sorted(rel for rel in known if rel in expected["suites"]), refused


def test_the_root_targets_file_s_unused_agent_targets_are_warnings_not_a_refusal(tmp_path: Path) -> None:
    """AgentV's root targets.yaml names cc-mirror, pi-cli ... targets no case of this file uses: AgentV runs
    it, so the gate does too, saying where the targets it cannot run yet are."""
    tree = harness.prepare_tree(tmp_path)
    suite = tree / "features" / "assert" / "evals" / "dataset.eval.yaml"
    targets = harness.targets_for(suite, tree, _fresh(tmp_path, "assert"))
    done = run_cli("validate", str(suite), "--targets", str(targets), cwd=tree, timeout=harness.SUITE_TIMEOUT)
    assert done.returncode == 0 and "cc-mirror" in done.stdout + done.stderr, done.stdout + done.stderr
