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

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from compat.agentv_4_42 import run_differential as harness
from compat.agentv_4_42.fake_model import FakeModel

EXPECTED = Path(__file__).with_name("agentv-4.42") / "expected.json"
EXAMPLES = harness.shared_root() / f"examples-{harness.VERSION}"

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} is not here (../shared/agentv is missing)")


def _needs_bun(suite: Path) -> bool:
    text = suite.read_text(errors="replace")
    return ".ts" in text and shutil.which("bun") is None


def _replay(tree: Path, work: Path, env: dict[str, str], rel: str) -> dict[str, Any]:
    suite = tree / rel
    out = work / "out" / rel.replace("/", "__")
    out.mkdir(parents=True)
    targets = harness.targets_for(suite, tree, out)
    subprocess.run([str(harness.GATE), "run", str(suite), "--targets", str(targets), "--output-dir", str(out),
                    "--no-cache", "--threshold", harness.PASS_MARK, "-q"], cwd=tree, env=env, capture_output=True,
                   timeout=harness.SUITE_TIMEOUT, stdin=subprocess.DEVNULL)
    return harness.gate_rows(out / "results.jsonl")


def test_every_recorded_case_scores_and_passes_as_in_agentv_4_42(tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text())
    assert expected["agentv"] == harness.VERSION
    tree = harness.prepare_tree(tmp_path)
    suites = {rel: data for rel, data in expected["suites"].items()
              if harness.inputs_hash(tree / rel) == data["inputs_sha256"] and not _needs_bun(tree / rel)}
    skipped = sorted(set(expected["suites"]) - set(suites))
    assert len(suites) >= len(expected["suites"]) // 2, f"most recorded examples changed or need bun: {skipped}"
    with FakeModel() as model:
        env = harness.environment(tmp_path, model.url, None)
        with ThreadPoolExecutor(max_workers=2) as pool:
            got = dict(zip(suites, pool.map(lambda rel: _replay(tree, tmp_path, env, rel), suites), strict=True))
    differences = [f"{rel} {case}: AgentV {want['score']} {'pass' if want['passed'] else 'fail'}, agentv-gate "
                   f"{(got[rel].get(case) or {}).get('score')} "
                   f"{'pass' if (got[rel].get(case) or {}).get('passed') else 'fail/absent'}"
                   for rel, data in suites.items() for case, want in data["cases"].items()
                   if (got[rel].get(case) or {}).get("score") != want["score"]
                   or (got[rel].get(case) or {}).get("passed") != want["passed"]]
    assert not differences, "\n".join(differences)
