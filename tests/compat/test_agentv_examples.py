"""AgentV 2.19's own examples, replayed against the gate: each case must score as the real AgentV scored it.

`agentv-2.19/expected.json` holds what AgentV 2.19 gave each case of its examples (score, verdict, hits,
misses, error state), recorded by `make compat` with the AgentV version and the hash of each example's
files. This test runs the gate on the same examples (read from ../shared/agentv, copied to a temporary
folder, never into the project) with the same deterministic loopback model, and compares, without node:
a TypeScript judge runs with the bun `make compat` cached, and its suite is skipped, saying so, without it.
Suites the gate refuses or scores differently for a listed reason (compat/known.py) are skipped with it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat.fake_llm import FakeModel
from compat.known import DIFFERING, REFUSED, same_misses
from compat.run_compat import (
    CACHE,
    environment,
    example_folder,
    folder_hash,
    prepare_tree,
    run_gate,
    shared_root,
)

RECORDED = Path(__file__).with_name("agentv-2.19") / "expected.json"
EXPECTED: dict[str, Any] = json.loads(RECORDED.read_text())
VERSION = EXPECTED["agentv_version"]
EXAMPLES = shared_root() / f"examples-{VERSION}"
MISSING = f"{EXAMPLES} is missing (a fresh clone without ../shared/agentv): nothing to replay AgentV's results on"


@pytest.fixture(scope="module")
def examples() -> Iterator[tuple[Path, dict[str, str]]]:
    """The examples prepared as `make compat` prepares them, and the environment pointing at the fake model."""
    if not EXAMPLES.is_dir():
        pytest.skip(MISSING)
    cli = CACHE / f"agentv-{VERSION}" / "node_modules" / ".bin" / "agentv"
    bun = CACHE / "bun" / "node_modules" / ".bin"
    work = Path(tempfile.mkdtemp(prefix="agentv-replay-"))
    try:
        tree, _ = prepare_tree(VERSION, cli if cli.exists() else None, work)
        with FakeModel() as model:
            env = environment(work, model.url, bun if (bun / "bun").exists() else None)
            yield tree, env
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("rel", sorted(EXPECTED["suites"]))
def test_the_gate_scores_agentv_s_own_example_as_agentv_does(rel: str, examples: tuple[Path, dict[str, str]],
                                                             tmp_path: Path) -> None:
    recorded = EXPECTED["suites"][rel]
    if "skipped" in recorded:
        pytest.skip(f"AgentV itself does not run it offline: {recorded['skipped']}")
    if rel in REFUSED or rel in DIFFERING:
        pytest.skip(f"known: {REFUSED.get(rel) or DIFFERING[rel]}")
    tree, env = examples
    # recorded with AgentV's own judges in mind; an AgentV assertion module (`.agentv/assertions/*.ts`) runs
    # with bun too, so a TypeScript file anywhere in the example needs it
    needs_bun = recorded["needs_bun"] or any(example_folder(EXAMPLES / rel).rglob("*.ts"))
    if needs_bun and not (shutil.which("bun", path=env["PATH"]) and (tree / "node_modules/zod").exists()):
        pytest.skip("its judges run with bun and import zod, which `make compat` caches (from npm and AgentV's "
                    "install); not installed here")
    assert folder_hash(example_folder(EXAMPLES / rel)) == recorded["example_hash"], (
        f"{rel}'s files changed since AgentV's results were recorded: run `make compat RECORD=1` again")
    ran = run_gate(tree / rel, tree, tmp_path / "out", env)
    assert not ran.refused, f"the gate refused a suite AgentV runs: {ran.refused}\n{ran.log}"
    problems = []
    for name, want in recorded["cases"].items():
        got = ran.cases.get(name)
        if got is None:
            problems.append(f"{name}: AgentV ran it, the gate did not")
            continue
        for key in ("score", "verdict", "hits", "misses", "error"):
            if key == "misses" and same_misses(want["error"], got.error, want["misses"], got.misses):
                continue
            if getattr(got, key) != want[key]:
                problems.append(f"{name}: {key}: AgentV {want[key]!r}, gate {getattr(got, key)!r}")
    assert not problems, "\n".join(problems)
