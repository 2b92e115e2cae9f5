"""What the agent changed in its workspace reaches the evaluators, as AgentV 2.19 gives it (`fileChanges`).

AgentV makes the suite's workspace (a template's copy, or an empty folder for hooks) a git
repository after `before_all`, commits it as a baseline, and after each case's target answers gives
the evaluators `git diff BASELINE --submodule=diff`: a code judge's `file_changes`, the
`[[ ## file_changes ## ]]` section of the default and rubric prompts. The gate gave `null` and
no section: a judge checking what the agent edited scored every case as if nothing had changed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

CHAT = "/v1/chat/completions"

AGENT = """\
import pathlib, sys
with open("notes.txt", "a") as notes:
    notes.write(sys.argv[1] + "\\n")
pathlib.Path("lib").mkdir(exist_ok=True)
if pathlib.Path("lib/.git").is_dir():  # a repository the before_all hook cloned: edited too
    pathlib.Path("lib/added.py").write_text("print('new')\\n")
print("edited")
"""

NESTED_REPO = """\
import json, pathlib, subprocess, sys
workspace = pathlib.Path(json.load(sys.stdin)["workspace_path"])
lib = workspace / "lib"
lib.mkdir()
(lib / "core.py").write_text("print('core')\\n")
for git in (["init", "-q"], ["add", "core.py"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "core"]):
    subprocess.run(["git", *git], cwd=lib, check=True)  # a repository as a hook clones one
"""

JUDGE = """\
import json, pathlib, sys
changes = json.load(sys.stdin)["file_changes"]
with open(pathlib.Path(__file__).parent / "seen.log", "a") as seen:
    seen.write(json.dumps(changes) + "\\n")
print(json.dumps({"score": 1 if changes and "+second" in changes else 0, "assertions": []}))
"""


def _verdict(request: RecordedRequest) -> FakeReply:
    """Every check met: a rubric judge's `checks`, else a plain verdict."""
    if request.json.get("response_format", {}).get("json_schema", {}).get("name") == "rubric_checks":
        return FakeReply.openai(json.dumps({"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "ok"}],
                                            "overall_reasoning": "ok"}))
    return FakeReply.openai(json.dumps({"score": 1, "hits": [], "misses": [], "reasoning": "ok"}))


Project = tuple[Path, FakeLLMServer]


@pytest.fixture()
def project(tmp_path: Path) -> Iterator[Project]:
    """A repository whose cli agent works in `evals/template`'s copy, and the judge model's server."""
    with FakeLLMServer() as judge:
        judge.set_default(CHAT, _verdict)
        yield _project(tmp_path, judge.url), judge


def _project(tmp_path: Path, judge_url: str) -> Path:
    targets = [{"name": "default", "provider": "cli", "command": "python3 agent.py {PROMPT}",
                "judge_target": "judge"},
               {"name": "judge", "provider": "openai", "base_url": judge_url, "model": "grader",
                "retry_initial_delay_ms": 1, "timeout_seconds": 10}]
    repo = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    template = repo / "evals/template"
    write(template / "agent.py", AGENT)
    write(template / "notes.txt", "first\n")
    write(repo / "evals/judge.py", JUDGE)
    write(repo / "evals/nested.py", NESTED_REPO)
    return repo


def test_the_workspace_diff_reaches_code_judges_and_the_judge_s_prompts(project: Project) -> None:
    repo, judge = project
    seen = repo / "evals/seen.log"
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./template
          hooks:
            before_all: {command: [python3, nested.py]}
        tests:
          - id: first
            input: second
            criteria: Appends the word
            assert:
              - {name: code_judge, type: code_judge, script: [python3, judge.py]}
              - {name: llm_judge_2, type: llm_judge}
          - id: later
            input: third
            criteria: Appends the word
            assert:
              - {name: code_judge, type: code_judge, script: [python3, judge.py]}
              - {name: llm_judge_2, type: llm_judge, rubrics: [Appends the word]}
    """)
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)  # in file order: the second case sees the first's edit
    prompts = [r.json["messages"][1]["content"] for r in judge.requests_for(CHAT)]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [r["verdict"] for r in read_rows(repo / ".agentv-gate/results.jsonl")] == ["pass", "pass"]
    first, later = (json.loads(line) for line in seen.read_text().splitlines())
    # the baseline is the suite's, taken after before_all: the nested repository's own file is in it,
    # what the agent added there is a change, and the second case also sees the first case's edit
    assert "+second" in first and "+third" not in first and "lib/added.py" in first and "core.py" not in first
    assert "+second" in later and "+third" in later
    assert "diff --git a/notes.txt b/notes.txt" in first and first.endswith("+second")  # git's own text, trimmed
    default_prompt, rubric_prompt = prompts
    assert default_prompt.endswith(f"\n\n[[ ## file_changes ## ]]\n{first}")
    assert f"[[ ## file_changes ## ]]\n{later}\n\n[[ ## rubrics ## ]]" in rubric_prompt


def test_without_changes_or_a_workspace_there_is_no_diff(project: Project) -> None:
    repo, judge = project
    seen = repo / "evals/seen.log"
    write(repo / "evals/agent.py", "print('edited nothing')\n")
    write(repo / "evals/s.eval.yaml", """
        tests:
          - id: no-workspace
            input: second
            criteria: Appends the word
            assert:
              - {name: code_judge, type: code_judge, script: [python3, judge.py]}
              - {name: llm_judge_2, type: llm_judge}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    prompts = [r.json["messages"][1]["content"] for r in judge.requests_for(CHAT)]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert seen.read_text().splitlines() == ["null"]  # the code judge's 0 and the judge's 1 meet the 0.5 threshold
    assert "file_changes" not in prompts[0]


def test_the_baseline_never_touches_the_repository_agentv_gate_runs_in(project: Project) -> None:
    """Run from a git hook, agentv-gate inherits GIT_DIR and GIT_INDEX_FILE: the baseline's `git add`
    and `commit` must still go to the workspace's own repository, never the team's."""
    repo, judge = project
    (repo / ".git").rmdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    seen = repo / "evals/seen.log"
    write(repo / "evals/s.eval.yaml", """
        workspace: {template: ./template}
        tests:
          - id: first
            input: second
            assert: [{name: code_judge, type: code_judge, script: [python3, judge.py]}]
    """)
    index = repo / ".git/index"
    ran = run_cli("run", "evals", cwd=repo, env={"GIT_DIR": str(repo / ".git"), "GIT_INDEX_FILE": str(index),
                                                  "GIT_WORK_TREE": str(repo)})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "+second" in json.loads(seen.read_text())
    assert not index.exists()  # nothing was staged in the team's repository
    log = subprocess.run(["git", "log", "--oneline"], cwd=repo, capture_output=True, text=True)
    assert log.returncode != 0 and "does not have any commits" in log.stderr


def test_a_workspace_git_cannot_baseline_gives_no_diff_and_the_case_still_runs(project: Project, tmp_path: Path) -> None:
    """Best effort, as in AgentV: a repository with no commit inside the workspace makes `git add -A`
    fail, so there is no baseline; and without git on PATH there is none either. Either way the
    judges get `null`, and the cases run and are scored."""
    repo, judge = project
    seen = repo / "evals/seen.log"
    write(repo / "evals/empty_repo.py", "import json, subprocess, sys\n"
          "subprocess.run(['git', 'init', '-q', 'lib'], cwd=json.load(sys.stdin)['workspace_path'], check=True)\n")
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./template
          hooks:
            before_all: {command: [python3, empty_repo.py]}
        tests:
          - id: first
            input: second
            assert: [{name: code_judge, type: code_judge, script: [python3, judge.py]}]
    """)
    unborn = run_cli("run", "evals", "--no-cache", cwd=repo)
    tools = tmp_path / "no-git"
    tools.mkdir()
    (tools / "python3").symlink_to(sys.executable)
    (tools / "sh").symlink_to(shutil.which("sh") or "/bin/sh")
    write(repo / "evals/s.eval.yaml", """
        workspace: {template: ./template}
        tests:
          - id: first
            input: second
            assert: [{name: code_judge, type: code_judge, script: [python3, judge.py]}]
    """)
    gitless = run_cli("run", "evals", "--no-cache", cwd=repo, env={"PATH": str(tools)})
    for ran in (unborn, gitless):
        assert ran.returncode == 1 and "FAIL" in ran.stdout + ran.stderr, ran.stdout + ran.stderr
    assert seen.read_text().splitlines() == ["null", "null"]


def _team_repo(path: Path) -> Path:
    """A team checkout mid-work: a commit, then an edit, a deletion, an untracked file, a staged file."""
    write(path / "kept.py", "print('kept')\n")
    write(path / "edited.py", "print('old')\n")
    write(path / "deleted.py", "print('gone')\n")
    for git in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        subprocess.run(["git", *git], cwd=path, check=True)
    write(path / "edited.py", "print('new')\n")
    (path / "deleted.py").unlink()
    write(path / "untracked.py", "print('wip')\n")
    write(path / "staged.py", "print('staged')\n")
    subprocess.run(["git", "add", "staged.py"], cwd=path, check=True)
    return path


def _team_state(path: Path) -> tuple[bytes, ...]:
    """What must not change: the status, the staged diff, the index's entries and bytes, every file."""
    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=path, capture_output=True, check=True).stdout
    files = tuple(p.read_bytes() if p.is_file() else b"" for p in sorted(path.rglob("*")) if ".git" not in p.parts)
    return (git("status", "--porcelain"), git("diff", "--cached"), git("ls-files", "-s"),
            (path / ".git/index").read_bytes(), *files)


LINKER = """\
import os, sys
os.symlink(os.environ["TEAM"], "src")  # the agent links the team's checkout into the workspace
with open("notes.txt", "a") as notes:
    notes.write(sys.argv[1] + "\\n")
print("linked")
"""

GITFILE = """\
import os, shutil, sys
shutil.rmtree(".git", ignore_errors=True)
with open(".git", "w") as gitfile:  # the agent points the workspace at the team's repository
    gitfile.write("gitdir: " + os.environ["TEAM"] + "/.git\\n")
print("repointed")
"""


@pytest.mark.parametrize("agent", [LINKER, GITFILE], ids=["linked-checkout", "gitdir-file"])
def test_file_changes_never_stages_in_a_team_repository_the_workspace_reaches(
        project: Project, tmp_path: Path, agent: str) -> None:
    repo, judge = project
    team = _team_repo(tmp_path / "team")
    before = _team_state(team)
    write(repo / "evals/template/agent.py", agent)
    write(repo / "evals/s.eval.yaml", """
        execution: {trials: {count: 2}}
        workspace:
          template: ./template
          hooks:
            before_each: {command: [python3, -c, "import os; os.path.lexists('src') or print('no link yet')"]}
        tests:
          - id: first
            input: second
            assert: [{name: code_judge, type: code_judge, script: [python3, judge.py]}]
    """)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, env={"TEAM": str(team)})
    assert "Traceback" not in ran.stderr, ran.stderr
    assert _team_state(team) == before
    seen = [json.loads(line) for line in (repo / "evals/seen.log").read_text().splitlines()]
    if agent == LINKER:  # the link is a change of its own, recorded as a link, never entered
        assert all(c and "+second" in c and "new file mode 120000" in c and "untracked.py" not in c for c in seen), seen
    else:
        assert seen and all(c is None for c in seen), seen


def test_file_changes_are_not_read_from_a_parent_repository_around_the_workspace(project: Project, tmp_path: Path) -> None:
    """The workspace's own repository holds its baseline even when the folder sits inside a checkout."""
    repo, judge = project
    team = _team_repo(tmp_path / "team")
    write(repo / "evals/template/agent.py", "import shutil, sys\nshutil.rmtree('.git')\n"
          "open('notes.txt', 'a').write(sys.argv[1] + '\\n')\n")
    write(repo / "evals/s.eval.yaml", """
        workspace: {template: ./template}
        tests:
          - id: first
            input: second
            assert: [{name: code_judge, type: code_judge, script: [python3, judge.py]}]
    """)
    before = _team_state(team)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, env={"TMPDIR": str(team)})
    assert "Traceback" not in ran.stderr, ran.stderr
    assert [json.loads(line) for line in (repo / "evals/seen.log").read_text().splitlines()] == [None]
    assert _team_state(team)[:4] == before[:4]


def test_a_huge_diff_reaches_the_judges_cut_with_a_note(project: Project) -> None:
    repo, judge = project
    write(repo / "evals/template/agent.py", "import sys\nopen('big.txt', 'w').write(('y' * 99 + '\\n') * 100_000)\n"
          "open('notes.txt', 'a').write(sys.argv[1] + '\\n')\n")
    write(repo / "evals/size.py", "import json, pathlib, sys\nc = json.load(sys.stdin)['file_changes']\n"
          "pathlib.Path('size.log').write_text(str(len(c.encode())) + '\\n' + c[-200:])\n"
          "print(json.dumps({'score': 1}))\n")
    write(repo / "evals/s.eval.yaml", """
        workspace: {template: ./template}
        tests:
          - id: first
            input: second
            assert: [{name: code_judge, type: code_judge, script: [python3, size.py]}]
    """)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    size, tail = (repo / "evals/size.log").read_text().split("\n", 1)
    assert 8 * 1024 * 1024 - 200 < int(size) < 8 * 1024 * 1024 + 200
    assert "[file_changes cut at 8,388,608 bytes:" in tail and "more bytes not shown]" in tail


def test_the_cut_is_at_the_cap_and_not_one_byte_before() -> None:
    from agentv_gate.execution.file_changes import cut_diff
    assert cut_diff(b"abcd", 4, limit=4) == "abcd"
    assert cut_diff(b"abcde", 5, limit=4) == "abcd\n… [file_changes cut at 4 bytes: 1 more bytes not shown]"


def test_a_hook_linking_the_team_repository_leaves_it_untouched(project: Project, tmp_path: Path) -> None:
    repo, judge = project
    team = _team_repo(tmp_path / "team")
    before = _team_state(team)
    write(repo / "evals/link.py", "import json, os, sys\n"
          "os.symlink(os.environ['TEAM'], os.path.join(json.load(sys.stdin)['workspace_path'], 'src'))\n")
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./template
          hooks:
            before_all: {command: [python3, link.py]}
        tests:
          - id: first
            input: second
            assert: [{name: code_judge, type: code_judge, script: [python3, judge.py]}]
    """)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, env={"TEAM": str(team)})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _team_state(team) == before
    seen = json.loads((repo / "evals/seen.log").read_text())
    assert "+second" in seen and "src" not in seen  # the link is in the baseline, so no change
