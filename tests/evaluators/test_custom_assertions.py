"""Custom assertion types: `type: <name>` runs `.agentv/assertions/<name>.py` (or an executable) as a code judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

WORD_COUNT = """\
import json, sys
payload = json.load(sys.stdin)
words = len(payload["answer"].split())
limit = payload["config"]["max_words"]
ok = words <= limit
print(json.dumps({"score": 1.0 if ok else 0.0, "hits": [f"{words} words"] if ok else [],
                  "misses": [] if ok else [f"{words} words > {limit}"], "reasoning": "counted"}))
"""

SHOUTS = """#!/bin/sh
cat > /dev/null
echo '{"score": 0, "misses": ["not shouting"]}'
"""


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run([sys.executable, "-m", "agentv_gate.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals/deep").mkdir(parents=True)
    (tmp_path / ".agentv/assertions").mkdir(parents=True)
    (tmp_path / ".agentv/targets.yaml").write_text(textwrap.dedent("""
        targets:
          - name: default
            provider: mock
            response: Paris is the capital of France.
    """))
    (tmp_path / ".agentv/assertions/word-count.py").write_text(WORD_COUNT)
    shouts = tmp_path / "evals/.agentv/assertions/shouts"  # nearer the eval file than the root's folder
    shouts.parent.mkdir(parents=True)
    shouts.write_text(SHOUTS)
    shouts.chmod(0o755)
    return tmp_path


def write_suite(project: Path, assertions: str) -> Path:
    path = project / "evals/deep/suite.eval.yaml"
    path.write_text("tests:\n  - id: capital\n    input: Capital of France?\n    criteria: Paris\n    assert:\n"
                    + textwrap.indent(textwrap.dedent(assertions).strip("\n"), "      ") + "\n")
    return path


def rows(project: Path) -> dict[str, Any]:
    [row] = map(json.loads, (project / ".agentv-gate/results.jsonl").read_text().splitlines())
    return row


def test_assertion_scripts_are_found_up_the_tree_and_run_as_code_judges(project: Path) -> None:
    write_suite(project, """
        - {type: word-count, max_words: 10}
        - {name: short, type: word-count, max_words: 3}
        - {type: shouts, weight: 0.5}
    """)
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = {r["name"]: r for r in rows(project)["evaluator_results"]}
    assert results["word-count"]["score"] == 1.0 and results["word-count"]["hits"] == ["6 words"]
    assert results["short"]["score"] == 0.0 and results["short"]["misses"] == ["6 words > 3"]
    assert results["shouts"]["misses"] == ["not shouting"]
    assert results["short"]["type"] == "custom_assertion"
    assert results["short"]["evaluator_raw_request"]["assertion"] == "word-count"


def test_a_crashing_assertion_is_an_error_case(project: Path) -> None:
    (project / ".agentv/assertions/boom.py").write_text("import sys\nsys.stderr.write('kaboom')\nsys.exit(3)\n")
    write_suite(project, "- {type: boom}\n- {type: contains, value: Paris}")
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 1
    row = rows(project)
    assert row["verdict"] == "error" and row["score"] == 0.5
    assert any("kaboom" in m for m in row["misses"])


@pytest.mark.parametrize(("files", "assertion", "message"), [
    ({}, "{type: nonsense}", "unknown evaluator type 'nonsense' (expected one of code_judge"),
    ({}, "{type: ../escape}", "unknown evaluator type '../escape'"),
    ({}, "{type: custom_assertion, assertion: word-count}", "unknown evaluator type 'custom_assertion'"),
    ({"evals/.agentv/assertions/tone.ts": "export default 1"}, "{type: tone}",
     "custom assertion 'tone' is"),
    ({"evals/.agentv/assertions/plain": "#!/bin/sh\n"}, "{type: plain}", "is not executable"),
])
def test_unknown_or_unrunnable_types_are_located_errors(project: Path, files: dict[str, str], assertion: str,
                                                        message: str) -> None:
    for name, text in files.items():
        (project / name).write_text(text)
    write_suite(project, f"- {assertion}")
    proc = run_cli("validate", "evals", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("evals/deep/suite.eval.yaml:6: ") and message in proc.stdout, proc.stdout
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 2 and message in proc.stderr
