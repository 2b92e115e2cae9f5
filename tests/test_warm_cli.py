"""`run_cli` forks most commands from a warm CLI (helpers/cli_zygote.py): what a test sees of a
command must be what the console script, started afresh, gives."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli import WarmCli, cli_env, run_cli
from tests.helpers.files import make_repo, write

pytestmark = pytest.mark.skipif(sys.platform != "linux" or os.environ.get("AGENTV_GATE_TEST_FRESH_CLI") == "1",
                                reason="the warm CLI is Linux-only, and off under AGENTV_GATE_TEST_FRESH_CLI=1")

FRESH = {"AGENTV_GATE_TEST_FRESH_CLI": "1"}

SUITE = """
tests:
  - id: passes
    input: q
    assert: [{type: contains, value: ok}]
  - id: fails
    input: q
    assert: [{type: contains, value: Paris}]
  - id: judged
    input: q
    assert: [{name: code_judge, type: code_judge, script: [python3, judge.py]}]
"""

JUDGE = """
import json, os, sys
case = json.load(sys.stdin)
print(json.dumps({"score": 1 if os.environ.get("JUDGE_MOOD") == "kind" else 0, "assertions": []}))
"""


def _steady(text: str) -> str:
    """What two runs of the same command share: durations aside, and cases in the order they ended."""
    return "\n".join(sorted(re.sub(r"\d+\.\d+s|\d+ ms", "T", text).splitlines()))


@pytest.mark.parametrize("args", [
    ("--version",),
    ("run", "--threshold", "2"),  # a usage error
    ("validate", "evals"),
    ("run", "evals", "--junit", "out.xml"),
    ("run", "evals", "--junit", "out.xml", "--workers", "1", "--verbose"),
])
def test_a_command_gives_what_the_console_script_gives(args: tuple[str, ...], tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / "evals" / "s.eval.yaml", SUITE)
    write(repo / "evals" / "judge.py", JUDGE)
    env = {"JUDGE_MOOD": "kind", "COLUMNS": "120"}
    assert WarmCli.matching(cli_env(env)) is not None  # this test compares the warm path to the fresh one
    warm = run_cli(*args, cwd=repo, env=env)
    warm_junit = (repo / "out.xml").read_text() if (repo / "out.xml").exists() else None
    fresh = run_cli(*args, cwd=repo, env={**env, **FRESH})
    assert (warm.returncode, _steady(warm.stdout), _steady(warm.stderr)) == \
        (fresh.returncode, _steady(fresh.stdout), _steady(fresh.stderr))
    if warm_junit is not None:
        assert _steady(warm_junit).count("<failure") == _steady((repo / "out.xml").read_text()).count("<failure") == 1


def test_each_command_reads_its_own_environment_and_folder(tmp_path: Path) -> None:
    first, second = make_repo(tmp_path / "one"), make_repo(tmp_path / "two")
    for repo in (first, second):
        write(repo / "evals" / "s.eval.yaml", SUITE)
        write(repo / "evals" / "judge.py", JUDGE)
    kind = run_cli("run", "evals", cwd=first, env={"JUDGE_MOOD": "kind"})
    harsh = run_cli("run", "evals", cwd=second)
    assert "JUDGE_MOOD" not in os.environ
    assert (kind.returncode, harsh.returncode) == (1, 1)
    assert re.search(r"PASS\s+evals/s.eval.yaml judged", kind.stdout + kind.stderr)
    assert re.search(r"FAIL\s+evals/s.eval.yaml judged", harsh.stdout + harsh.stderr)
    assert (first / ".agentv-gate" / "results.jsonl").exists() and (second / ".agentv-gate" / "results.jsonl").exists()


def test_a_command_past_its_timeout_is_killed_as_subprocess_run_kills_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, f"""
targets:
  - name: default
    provider: cli
    command_template: "{sys.executable} -c 'import time; time.sleep(30)'"
""")
    write(repo / "evals" / "s.eval.yaml", SUITE)
    write(repo / "evals" / "judge.py", JUDGE)
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        run_cli("run", "evals", cwd=repo, timeout=2)
    assert time.monotonic() - started < 10
    assert raised.value.timeout == 2


def test_an_environment_that_starts_python_differently_gets_a_fresh_console_script(tmp_path: Path) -> None:
    warm = WarmCli.matching(cli_env())
    assert warm is not None
    assert WarmCli.matching(cli_env({"PYTHONIOENCODING": "latin-1"})) is None
    assert WarmCli.matching(cli_env({"AGENTV_GATE_SELF_CHECK": "0"})) is None
    assert WarmCli.matching(cli_env(FRESH)) is None
    assert WarmCli.matching(cli_env({"ANY_OTHER": "x"})) is warm
    proc = run_cli("--version", cwd=tmp_path, env={"PYTHONIOENCODING": "latin-1"})
    assert proc.returncode == 0 and proc.stdout.startswith("agentv-gate ")


def test_a_request_too_large_for_the_warm_cli_starts_the_console_script(tmp_path: Path) -> None:
    huge = {f"HUGE_{n}": "x" * 100_000 for n in range(4)}  # over a socket message's size
    proc = run_cli("--version", cwd=tmp_path, env=huge)
    assert proc.returncode == 0 and proc.stdout.startswith("agentv-gate ")
