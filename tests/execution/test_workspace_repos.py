"""AgentV 4.x `workspace.repos`, through the CLI: local repositories (a path from the working folder, a
`file://` URL) cloned into the workspace at their commit, `sparse` folders, a mirror cached between runs under
the gate's cache folder, and a clone that fails making that suite's cases errors (located) while others run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id
from tests.helpers.workspaces import agent_targets

AGENT = """\
import os, sys
prompt, out = sys.argv[1], sys.argv[2]
found = []
for root, dirs, files in os.walk("."):
    dirs[:] = sorted(d for d in dirs if d != ".git")
    found += [os.path.relpath(os.path.join(root, f), ".") for f in files]
open(out, "w").write("files=" + ",".join(sorted(found)))
"""
SUITE = """\
workspace:
  mode: temp
  repos:
    - path: lib
      repo: ./vendor/lib
      commit: {first}
    - path: sparse/lib
      repo: file://{repo}/vendor/lib
      sparse: [docs]
  hooks:
    before_each: {command: [bash, -c, 'cat >/dev/null; echo scratch > "{{workspace_path}}/lib/scratch.txt"'], reset: fast}
tests:
  - id: cloned
    input: hi
    assertions:
      - {type: contains, value: "lib/v1.txt"}
      - {type: contains, value: "sparse/lib/docs/guide.md"}
      - {type: regex, value: "^(?!.*lib/v2.txt,)(?!.*sparse/lib/src/)"}
"""
BROKEN = """\
workspace:
  repos:
    - path: lib
      repo: ./vendor/not-a-repo
tests:
  - {id: unprepared, input: hi, assertions: [{type: contains, value: "files="}]}
"""
REMOTE = """\
workspace:
  repos:
    - path: lib
      repo: https://127.0.0.1:9/nowhere.git
tests:
  - {id: remote, input: hi, assertions: [{type: contains, value: "files="}]}
"""


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def make_library(repo: Path) -> str:
    """vendor/lib: a repository whose first commit has v1.txt, src/ and docs/; the second adds v2.txt."""
    lib = repo / "vendor/lib"
    for name, text in {"v1.txt": "1\n", "src/code.py": "x = 1\n", "docs/guide.md": "# guide\n"}.items():
        write(lib / name, text)
    _git(lib, "init", "-q")
    _git(lib, "add", "-A")
    _git(lib, "commit", "-qm", "first")
    first = _git(lib, "rev-parse", "HEAD")
    write(lib / "v2.txt", "2\n")
    _git(lib, "add", "-A")
    _git(lib, "commit", "-qm", "second")
    (repo / "vendor/not-a-repo").mkdir()
    return first


def setup(repo: Path, suites: dict[str, str]) -> str:
    first = make_library(repo)
    write(repo / "agent.py", AGENT)
    write(repo / ".agentv/targets.yaml", agent_targets(repo))
    for name, text in suites.items():
        write(repo / f"evals/{name}.eval.yaml", text.replace("{first}", first).replace("{repo}", str(repo)))
    return first


def test_repos_are_cloned_at_their_commit_with_sparse_folders_and_cached(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    setup(repo, {"s": SUITE})
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert rows_by_id(repo / ".agentv-gate/results.jsonl")["cloned"]["score"] == 1.0
    mirrors = sorted(p.name for p in (repo / ".agentv-gate-cache/repos").iterdir())
    assert len(mirrors) == 2  # keyed on source and commit
    again = run_cli("run", "evals", "--no-cache", cwd=repo)  # a second run clones from the cached mirrors
    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted(p.name for p in (repo / ".agentv-gate-cache/repos").iterdir()) == mirrors
    assert _git(repo / "vendor/lib", "status", "--porcelain") == ""  # the source is never touched


def test_a_clone_that_fails_errors_its_suite_and_the_others_still_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    setup(repo, {"s": SUITE, "broken": BROKEN, "remote": REMOTE})
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = rows_by_id(repo / ".agentv-gate/results.jsonl")
    assert rows["cloned"]["verdict"] == "pass"
    for case, line in (("unprepared", 3), ("remote", 3)):
        assert rows[case]["verdict"] == "error"
        assert "Failed to materialize repos" in rows[case]["error"]
        assert f".eval.yaml:{line})" in rows[case]["error"]


def test_a_local_repo_outside_the_repository_is_refused_at_its_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    setup(repo, {"s": SUITE.replace("file://{repo}/vendor/lib", f"file://{tmp_path}/elsewhere")})
    (tmp_path / "elsewhere").mkdir()
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2
    assert "evals/s.eval.yaml:8:" in ran.stderr and "outside the repository root" in ran.stderr


NOTE_AGENT = """\
import os, sys
prompt, out = sys.argv[1], sys.argv[2]
seen = os.path.exists("lib/agent-note.txt")
open("lib/agent-note.txt", "w").write(prompt)
open(out, "w").write(f"seen-earlier-note={seen}")
"""
RESET = """\
execution: {workers: 1}
workspace:
  mode: MODE
  repos:
    - path: lib
      repo: ./vendor/lib
  hooks:
    before_each: {reset: fast}
tests:
  - {id: one, input: first, assertions: [{type: contains, value: "seen-earlier-note=False"}]}
  - {id: two, input: second, assertions: [{type: contains, value: "seen-earlier-note=False"}]}
"""
"""Checked against AgentV 4.42.4 by hand: temp 1.0 pass twice; pooled: one 1.0 pass, two 0.0 fail (4.42 resets a
pool slot's root, whose `git clean` does not enter the nested repository)."""


def test_a_reset_with_repos_resets_each_repository_in_temp_mode_and_the_root_when_pooled(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    setup(repo, {"temp": RESET.replace("MODE", "temp"), "pooled": RESET.replace("MODE", "pooled")})
    write(repo / "agent.py", NOTE_AGENT)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = {(Path(row["suite"]).name.split(".")[0], row["eval_id"]): row["verdict"]
            for row in map(json.loads, (repo / ".agentv-gate/results.jsonl").read_text().splitlines())}
    assert rows == {("temp", "one"): "pass", ("temp", "two"): "pass", ("pooled", "one"): "pass",
                    ("pooled", "two"): "fail"}
