"""A 4.x hook's `command` as AgentV 4.42 runs it, through the CLI: a list is the argv (a `bash -c` script in it
is an argument, never a file to find), a string is split on whitespace (no shell, quotes kept), and
`{{workspace_path}}` in an argument is the workspace."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import rows_by_id
from tests.helpers.workspaces import agent_targets

AGENT = """\
import os, sys
prompt, out = sys.argv[1], sys.argv[2]
names = sorted(n for n in os.listdir(".") if not n.startswith("."))
open(out, "w").write("files=" + ",".join(names))
"""
HOOK = """\
import json, sys
payload = json.load(sys.stdin)
for path in sys.argv[1:]:
    open(path, "a").write(payload["test_id"] + "\\n")
"""
SUITE = """\
execution: {workers: 1}
workspace:
  template: ./tpl
  hooks:
    before_all:
      command: [bash, -c, 'cat > "{{workspace_path}}/made.txt"']
    before_each:
      command: python3 ../hook.py {{workspace_path}}/each.txt
tests:
  - id: list-shell
    input: hi
    assertions:
      - {type: contains, value: "made.txt"}
      - {type: contains, value: "each.txt"}
"""
"""Checked side by side with AgentV 4.42.4 (tests/compat/test_agentv_442_side_by_side.py): list-shell 1.0 pass."""

QUOTED = """\
  - id: quoted-string
    input: hi
    workspace:
      hooks:
        before_each:
          command: "bash -c 'cat >/dev/null; touch quoted.txt'"
    assertions:
      - {type: contains, value: "files="}
"""
"""AgentV 4.42.4 splits this on whitespace: `bash -c "'cat"` fails, and the case is an execution error
("unexpected EOF while looking for matching `''"). Not in the side-by-side suite: 4.42 run by node writes the
hook's stdin after a quick hook has exited, and sometimes dies of the EPIPE."""


def files(repo: Path, suite: str) -> dict[str, str]:
    return {"agent.py": AGENT, "hook.py": HOOK, "evals/tpl/seed.txt": "seed\n",
            ".agentv/targets.yaml": agent_targets(repo), "evals/s.eval.yaml": suite}


def _run(tmp_path: Path, text: str) -> tuple[int, dict[str, dict], str]:
    repo = make_repo(tmp_path)
    for name, body in files(repo, text).items():
        write(repo / name, body)
    ran = run_cli("run", "evals", cwd=repo)
    rows = rows_by_id(repo / ".agentv-gate/results.jsonl") if (repo / ".agentv-gate/results.jsonl").exists() else {}
    return ran.returncode, rows, ran.stdout + ran.stderr


def test_a_bash_script_in_a_list_command_and_a_string_with_arguments_run(tmp_path: Path) -> None:
    code, rows, out = _run(tmp_path, SUITE)
    assert code == 0, out
    assert rows["list-shell"]["score"] == 1.0


def test_a_quoted_string_command_is_split_on_whitespace_as_agentv_splits_it(tmp_path: Path) -> None:
    code, rows, out = _run(tmp_path, SUITE + QUOTED)
    assert code == 1, out
    assert rows["list-shell"]["verdict"] == "pass"
    assert rows["quoted-string"]["verdict"] == "error"
    assert "matching" in rows["quoted-string"]["error"]
    assert "split on whitespace" in out  # said before the run, at the command's line



def test_a_folder_is_a_hook_argument_as_written(tmp_path: Path) -> None:
    """`[ls, ./tpl]`: AgentV passes every argument as written; the gate once refused a folder as a script file
    that is not there (AgentV's features/workspace-setup-script, `--marketplace-source ../marketplace`)."""
    suite = SUITE.replace("command: python3 ../hook.py {{workspace_path}}/each.txt",
                          "command: [bash, -c, 'cat >/dev/null; ls \"$1\" > \"{{workspace_path}}/each.txt\"', x, ./tpl]")
    code, rows, out = _run(tmp_path, suite)
    assert code == 0, out
    assert rows["list-shell"]["score"] == 1.0
