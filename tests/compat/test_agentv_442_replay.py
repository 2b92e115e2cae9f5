"""AgentV 4.42.4's recorded results on its own examples, replayed against agentv-gate without node (issue 33).

`compat/agentv_4_42/run_differential.py --record` ran each example eval file with the real AgentV 4.42.4 and
kept, per case, its score and whether it passed (tests/compat/agentv-4.42/expected.json, with AgentV's
version and a hash of each example's files). This test runs the gate on the same files, prepared the same
way (the loopback model, the `@agentv/sdk` stand-in, the `uv` shim), and asks for the same score and verdict
on every case. An example whose files changed since the recording is skipped, saying so, and so is the
whole test when ../shared/agentv is not beside the repository. TypeScript graders need `bun`: without it
their suites are skipped by name.
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

EXPECTED = Path(__file__).with_name("agentv-4.42") / "expected.json"
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
    return any((folder / ".agentv" / "targets.yaml").is_file() for folder in [suite.parent, *suite.parents]
               if folder == tree or tree in folder.parents)


def _replay(tree: Path, work: Path, env: dict[str, str], rels: list[str], targets: Path) -> dict[str, dict[str, Any]]:
    """One gate run over `rels` (suites sharing `targets`): (suite -> case -> row), as the harness reads rows."""
    out = work / "out" / hashlib.sha256("|".join(rels).encode()).hexdigest()[:12]
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([str(harness.GATE), "run", *(str(tree / rel) for rel in rels), "--targets", str(targets),
                    "--output-dir", str(out), "--no-cache", "--threshold", harness.PASS_MARK, "--workers", "16", "-q"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=harness.SUITE_TIMEOUT,
                          stdin=subprocess.DEVNULL)
    rows: dict[str, dict[str, Any]] = {rel: {} for rel in rels}
    results = out / "results.jsonl"
    assert results.is_file(), f"the gate wrote no results (exit {done.returncode}): {done.stderr[-3000:]}"
    for line in results.read_text().splitlines() if results.is_file() else []:
        row = json.loads(line)
        if row.get("suite") in rows:
            rows[row["suite"]][row["eval_id"]] = harness.gate_rows_of([row])[row["eval_id"]]
    return rows


def _fresh(work: Path, rel: str) -> Path:
    folder = work / "targets" / rel.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_every_recorded_case_scores_and_passes_as_in_agentv_4_42(tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text())
    assert expected["agentv"] == harness.VERSION
    tree = harness.prepare_tree(tmp_path)
    suites = {rel: data for rel, data in expected["suites"].items()
              if harness.inputs_hash(tree / rel) == data["inputs_sha256"] and not _needs_bun(tree / rel)}
    skipped = sorted(set(expected["suites"]) - set(suites))
    assert len(suites) >= len(expected["suites"]) // 2, f"most recorded examples changed or need bun: {skipped}"
    shared = [rel for rel in suites if not _own_targets(tree / rel, tree)]
    groups: list[tuple[list[str], Path]] = []
    if shared:  # the suites that name only the loopback model's targets share one targets file and one run
        union = tmp_path / "shared"
        union.mkdir()
        fake = [harness.targets_for(tree / rel, tree, _fresh(tmp_path, rel)) for rel in shared]
        entries = {t["name"]: t for path in fake for t in yaml.safe_load(path.read_text())["targets"]}
        (union / "targets.yaml").write_text(yaml.safe_dump({"targets": list(entries.values())}, sort_keys=False))
        groups.append((shared, union / "targets.yaml"))
    groups += [([rel], harness.targets_for(tree / rel, tree, _fresh(tmp_path, rel))) for rel in suites if rel not in shared]
    got: dict[str, dict[str, Any]] = {}
    with FakeModel() as model:
        env = harness.environment(tmp_path, model.url, None)
        with ThreadPoolExecutor(max_workers=2) as pool:
            for rows in pool.map(lambda group: _replay(tree, tmp_path, env, *group), groups):
                got.update(rows)
    differences = [f"{rel} {case}: AgentV {want['score']} {'pass' if want['passed'] else 'fail'}, agentv-gate "
                   f"{(got[rel].get(case) or {}).get('score')} "
                   f"{'pass' if (got[rel].get(case) or {}).get('passed') else 'fail/absent'}"
                   for rel, data in suites.items() for case, want in data["cases"].items()
                   if (got[rel].get(case) or {}).get("score") != want["score"]
                   or (got[rel].get(case) or {}).get("passed") != want["passed"]]
    assert not differences, "\n".join(differences)
