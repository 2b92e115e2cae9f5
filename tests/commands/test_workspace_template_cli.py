"""`workspace.template` through the real CLI: the copy the cli target, the hooks and a code judge work in.

AgentV 2.19 copies the template (minus `.git`) once per suite into a fresh folder, runs the cli
target there (over the target's own `cwd`), gives it to hooks and code judges as `workspace_path`
(and `AGENTV_WORKSPACE_PATH`), runs the suite's cases one at a time since they share it, and a hook
without `cwd` still runs in the eval file's folder.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

AGENT = """\
import os, pathlib, sys, time
# relative to the working directory: the workspace copy, never the target's cwd
here = pathlib.Path.cwd()
busy = here / "busy"
if busy.exists():
    sys.exit("two cases in the shared workspace at once")
busy.write_text("x")
time.sleep(0.3)
seen = sorted(p.name for p in here.iterdir() if p.name.startswith("done-"))
(here / f"done-{len(seen)}").write_text("x")
busy.unlink()
pathlib.Path(sys.argv[2]).write_text(pathlib.Path("README.md").read_text().strip() + f" seen={len(seen)}")
"""

HOOK = """\
import json, os, pathlib, sys
payload = json.load(sys.stdin)
with open(pathlib.Path(__file__).parent / "hooks.log", "a") as out:
    out.write(json.dumps({"hook": sys.argv[1], "cwd": os.getcwd(), **payload}) + "\\n")
"""

JUDGE = """\
import json, os, pathlib, sys
payload = json.load(sys.stdin)
workspace = payload["workspace_path"]
ok = workspace == os.environ.get("AGENTV_WORKSPACE_PATH") and (pathlib.Path(workspace) / "README.md").is_file()
print(json.dumps({"score": 1 if ok else 0, "hits": [f"workspace {workspace}"] if ok else [],
                  "misses": [] if ok else [f"workspace {workspace!r}"]}))
"""

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent.py {PROMPT} {OUTPUT_FILE}
    cwd: ./elsewhere
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict], list[dict], str]:
    """One run of a two-case suite with a template, on 4 workers: the repo, its rows, the hook log, stderr."""
    repo = make_repo(tmp_path_factory.mktemp("template") / "repo", TARGETS)
    write(repo / "evals/elsewhere/.keep", "")
    template = repo / "evals/workspace-template"
    write(template / "README.md", "Shared Workspace Template\n")
    write(template / "agent.py", AGENT)
    write(template / "docs/guide.md", "a guide\n")
    write(template / ".git/HEAD", "ref: refs/heads/main\n")
    (template / "README.md").chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)  # as AgentV's examples ship
    write(repo / "evals/hook.py", HOOK)
    write(repo / "evals/judge.py", JUDGE)
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./workspace-template
          hooks:
            before_all: {command: [python3, hook.py, before_all]}
            before_each: {command: [python3, hook.py, before_each]}
            after_all: {command: [python3, hook.py, after_all]}
        tests:
          - id: first
            input: Read README.md
            assert:
              - {type: contains, value: Shared Workspace Template}
              - {name: ws, type: code_judge, command: [python3, judge.py]}
          - id: second
            input: Read README.md
            assert:
              - {type: contains, value: Shared Workspace Template}
              - {name: ws, type: code_judge, command: [python3, judge.py]}
    """)
    done = run_cli("run", "evals", "--workers", "4", "--no-cache", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    log = [json.loads(line) for line in (repo / "evals/hooks.log").read_text().splitlines()]
    return repo, rows, log, done.stderr


def test_the_cli_target_runs_in_a_copy_of_the_template_that_the_suite_s_cases_share_one_at_a_time(
        ran: tuple[Path, dict[str, dict], list[dict], str]) -> None:
    _, rows, _, _ = ran
    assert {row["verdict"] for row in rows.values()} == {"pass"}
    answers = sorted(row["answer"] for row in rows.values())
    # one copy for the suite: the second case sees what the first one left (AgentV's shared workspace),
    # and never ran beside it (the agent exits non-zero when it finds the other one busy)
    assert answers == ["Shared Workspace Template seen=0", "Shared Workspace Template seen=1"]


def test_hooks_and_code_judges_are_given_the_copy_and_hooks_still_run_in_the_eval_file_s_folder(
        ran: tuple[Path, dict[str, dict], list[dict], str]) -> None:
    repo, rows, log, _ = ran
    workspaces = {entry["workspace_path"] for entry in log}
    assert len(workspaces) == 1
    workspace = workspaces.pop()
    assert Path(workspace).name.startswith("agentv-gate-workspace-") and repo.resolve() not in Path(workspace).parents
    assert [entry["hook"] for entry in log].count("before_all") == 1 and log[-1]["hook"] == "after_all"
    assert {entry["cwd"] for entry in log} == {str((repo / "evals").resolve())}
    for row in rows.values():
        judged = next(e for e in row["evaluator_results"] if e["name"] == "ws")
        assert judged["hits"] == [f"workspace {workspace}"]


def test_the_copy_skips_git_keeps_file_modes_and_is_removed_while_the_template_is_left_as_it_was(
        ran: tuple[Path, dict[str, dict], list[dict], str]) -> None:
    repo, _, log, _ = ran
    assert not Path(log[0]["workspace_path"]).exists()  # removed when the run ended
    template = repo / "evals/workspace-template"
    # the agent's files went to the copy only
    assert sorted(p.name for p in template.iterdir()) == [".git", "README.md", "agent.py", "docs"]


def test_the_copy_has_the_template_s_files_without_git(tmp_path: Path) -> None:
    from agentv_gate.execution.workspace_copy import copy_template, remove_workspace

    template = tmp_path / "t"
    write(template / "a.txt", "a")
    write(template / "sub/b.txt", "b")
    write(template / ".git/HEAD", "x")
    write(template / "sub/.git/HEAD", "x")
    (template / "a.txt").chmod(0o444)
    (template / "sub").chmod(0o555)
    try:
        copy = copy_template(template)
        assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == ["a.txt", "sub", "sub/b.txt"]
        assert stat.S_IMODE((copy / "a.txt").stat().st_mode) == 0o444
        assert os.access(copy / "sub", os.W_OK)  # the agent may write anywhere in its copy
        remove_workspace(copy)
        assert not copy.exists()
    finally:
        (template / "sub").chmod(0o755)


def test_a_missing_template_and_a_repository_to_clone_are_refused_at_their_lines(repo: Path) -> None:
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./nowhere
        tests:
          - {id: a, input: Hi, criteria: Greets}
    """)
    write(repo / "evals/r.eval.yaml", """
        workspace:
          repos:
            - path: ./agentv
              source: {type: git, url: https://example.invalid/agentv.git}
        tests:
          - {id: a, input: Hi, criteria: Greets}
    """)
    write(repo / "evals/m.eval.yaml", """
        workspace: {mode: static}
        tests:
          - {id: a, input: Hi, criteria: Greets}
    """)
    ran = run_cli("validate", "evals", cwd=repo)
    out = ran.stdout + ran.stderr
    assert ran.returncode == 1, out
    assert "evals/s.eval.yaml:2: Workspace template not found: ./nowhere" in out
    assert "evals/m.eval.yaml:1: 'mode: static' is an AgentV feature agentv-gate does not run yet" in out
    assert ("evals/r.eval.yaml:4: workspace repository 'https://example.invalid/agentv.git' (repos[0]) would be "
            "cloned into the workspace with git") in out


def test_a_pooled_mode_and_a_reset_without_repositories_warn_and_the_suite_runs(repo: Path) -> None:
    """AgentV 2.19 pools and resets only `repos`; without them both change nothing (the workspace file
    of AgentV's workspace-shared-config holds both)."""
    write(repo / "evals/s.eval.yaml", """
        requires: {agentv: "^2.19"}
        workspace:
          mode: pooled
          hooks:
            after_each: {reset: fast}
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    write(repo / "evals/t.eval.yaml", """
        workspace: {mode: pool}
        tests:
          - {id: b, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals/s.eval.yaml", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "evals/s.eval.yaml:3: warning: 'mode' has no effect here" in ran.stderr
    assert "evals/s.eval.yaml:5: warning: 'reset' has no effect here" in ran.stderr
    typo = run_cli("run", "evals/t.eval.yaml", cwd=repo)
    assert typo.returncode == 2
    assert "evals/t.eval.yaml:1: workspace 'mode' must be pooled, temp or static, got 'pool'" in typo.stderr


def test_a_template_in_a_4x_file_runs_as_in_a_2x_file(repo: Path) -> None:
    """AgentV 4.42 copies a suite's template once, as 2.19 does, unless `isolation: per_test` (refused):
    a 4.x file's template validates and runs (its per-test file changes: tests/execution/test_workspace_4x.py)."""
    write(repo / "evals/template/README.md", "hello")
    suite = """
        workspace:
          template: ./template
        tests:
          - id: a
            input: Hi
            criteria: Greets
            assertions: [{type: {kind}, value: hello}]
    """
    write(repo / "evals/two.eval.yaml", suite.replace("{kind}", "contains"))
    write(repo / "evals/four.eval.yaml", suite.replace("{kind}", "code-grader").replace("value: hello",
                                                                                         "command: [python3, j.py]"))
    write(repo / "evals/j.py", "print('{\"score\": 1}')\n")
    ran = run_cli("validate", "evals", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "does not run yet" not in ran.stdout + ran.stderr


LISTER = """\
import os, pathlib, sys
# the agent reports what the copy holds: each entry, a link or a file, and its text
here = pathlib.Path.cwd()
seen = []
for path in sorted(here.rglob("*")):
    if ".git" in path.parts or path.name in ("lister.py",):
        continue
    kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
    text = path.read_text() if kind == "file" else ""
    seen.append(f"{path.relative_to(here)}:{kind}:{text.strip()}")
pathlib.Path(sys.argv[2]).write_text("|".join(seen))
"""


@pytest.mark.parametrize("outside", ["/proc/self/environ", "secret.txt", "secrets"], ids=["environ", "file", "folder"])
def test_a_template_link_resolving_outside_the_repository_is_refused_at_validate_and_run(
        tmp_path: Path, outside: str) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS.replace("agent.py", "lister.py"))
    write(repo / "evals/elsewhere/.keep", "")
    write(tmp_path / "secret.txt", "TOKEN-123\n")
    write(tmp_path / "secrets/key", "TOKEN-456\n")
    template = repo / "evals/template"
    write(template / "lister.py", LISTER)
    write(template / "sub/inner.txt", "inner\n")
    target = outside if outside.startswith("/") else str(tmp_path / outside)
    (template / "sub/leak").symlink_to(target)
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./template
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: nothing}]}
    """)
    before = sorted(str(p) for p in tmp_path.rglob("*") if "repo" not in p.parts)
    checked = run_cli("validate", "evals", cwd=repo)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    for result in (checked, ran):
        out = result.stdout + result.stderr
        assert result.returncode in (1, 2), out
        assert "evals/s.eval.yaml:2: workspace template './template': the link sub/leak resolves to" in out, out
        assert "outside the repository" in out and "TOKEN" not in out
    assert ran.returncode == 2
    assert not (repo / ".agentv-gate/results.jsonl").exists() or "TOKEN" not in \
        (repo / ".agentv-gate/results.jsonl").read_text()
    assert sorted(str(p) for p in tmp_path.rglob("*") if "repo" not in p.parts) == before


def test_a_template_link_loop_is_refused_at_its_line_at_validate_and_run(tmp_path: Path) -> None:
    """Two links pointing at each other cannot be resolved: looking them up crashed both commands."""
    repo = make_repo(tmp_path / "repo", TARGETS.replace("agent.py", "lister.py"))
    write(repo / "evals/elsewhere/.keep", "")
    template = repo / "evals/template"
    write(template / "lister.py", LISTER)
    (template / "one").symlink_to("two")
    (template / "two").symlink_to("one")
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./template
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: nothing}]}
    """)
    for command, code in ((("validate", "evals"), 1), (("run", "evals", "--no-cache"), 2)):
        ran = run_cli(*command, cwd=repo)
        out = ran.stdout + ran.stderr
        assert ran.returncode == code and "Traceback" not in out, out
        assert ("evals/s.eval.yaml:2: workspace template './template': the link one cannot be resolved (a loop of "
                "links)") in out, out


def test_template_links_inside_the_repository_are_copied_as_their_content(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", TARGETS.replace("agent.py", "lister.py"))
    write(repo / "evals/elsewhere/.keep", "")
    write(repo / "shared/common.txt", "common\n")
    template = repo / "evals/template"
    write(template / "lister.py", LISTER)
    write(template / "local.txt", "local\n")
    (template / "alias.txt").symlink_to("local.txt")
    (template / "common").symlink_to("../../shared")
    (template / "dangling").symlink_to("missing.txt")
    (template / "loop").symlink_to(".")
    copied = "alias.txt:file:local|common:dir:|common/common.txt:file:common|dangling:link:|local.txt:file:local"
    write(repo / "evals/s.eval.yaml", f"""
        workspace:
          template: ./template
        tests:
          - {{id: a, input: Hi, assert: [{{type: equals, value: "{copied}"}}]}}
    """)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    out = ran.stdout + ran.stderr
    assert ran.returncode == 1 and "points at a folder holding it" in out, out  # a loop: refused at run
    (template / "loop").unlink()
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
