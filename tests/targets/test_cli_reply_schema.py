"""A `cli` agent's JSON reply is read as AgentV 2.x reads it: through its zod `CliOutputSchema`.

AgentV (since 2.0, `parseOutputContent` in providers/cli.ts) takes the reply's fields only when the
whole object fits the schema (`text` anything; `output`/`output_messages` a list of messages with a
text `role`; `token_usage` `{input, output}` numbers; `cost_usd`, `duration_ms` numbers); otherwise
the whole file is the answer, as text. Messages win over `text`; a negative `cost_usd` is dropped
(no cost reported); the file's text is the answer as written (CRLF read as LF), never trimmed. Each
difference here was a case passing in agentv-gate that AgentV fails. One run of the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

REPLIES = {
    "usage-incomplete": '{"text": "Paris", "token_usage": {"input": 3}}',
    "cost-as-text": '{"text": "Paris", "cost_usd": "0.01"}',
    "messages-win": '{"text": "Paris", "output_messages": [{"role": "assistant", "content": "London"}]}',
    "message-without-role": '{"text": "Paris", "output_messages": [{"content": "Paris"}]}',
    "nan-cost": '{"text": "Paris", "cost_usd": NaN}',
    "trailing-newline": "Paris\n",
    "negative-cost": '{"text": "Paris", "cost_usd": -1}',
    "agent-error": '{"text": "Paris", "error": "upstream failed"}',
    "good": '{"text": "Paris", "cost_usd": 0.01, "token_usage": {"input": 1, "output": 2, "reasoning": 1}}',
    "crlf-json": '{"text": "Paris"}\r\n',
}
EXPECTED = {"usage-incomplete": "fail", "cost-as-text": "fail", "messages-win": "fail",
            "message-without-role": "fail", "nan-cost": "fail", "trailing-newline": "fail",
            "negative-cost": "fail", "agent-error": "error", "good": "pass", "crlf-json": "pass"}

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 ../agent.py {EVAL_ID} {OUTPUT_FILE}
"""


def _case(case_id: str) -> str:
    if case_id == "trailing-newline":
        check = "{type: regex, value: '^Paris$'}"
    elif case_id == "negative-cost":
        check = "{type: cost, budget: 0.05}"
    else:
        check = "{type: equals, value: Paris}"
    return f"  - id: {case_id}\n    input: Capital of France?\n    assert:\n      - {check}\n"


def test_cli_replies_are_read_through_agentvs_schema(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "agent.py", f"""
        import sys
        REPLIES = {json.dumps(REPLIES)}
        with open(sys.argv[2], "w", encoding="utf-8", newline="") as out:
            out.write(REPLIES[sys.argv[1]])
    """)
    (repo / "evals" / "reply.eval.yaml").write_text("tests:\n" + "".join(_case(c) for c in REPLIES), encoding="utf-8")
    proc = run_cli("run", "evals", "--no-cache", cwd=repo, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = rows_by_id(repo / RESULTS)
    assert {case: rows[case]["verdict"] for case in REPLIES} == EXPECTED
    assert rows["messages-win"]["candidate_answer"] == "London"
    assert rows["usage-incomplete"]["candidate_answer"] == REPLIES["usage-incomplete"]
    assert rows["trailing-newline"]["candidate_answer"] == "Paris\n"
    assert rows["negative-cost"].get("cost_usd") is None
    assert "upstream failed" in rows["agent-error"]["error"]
    assert rows["good"]["token_usage"]["output"] == 2 and rows["good"]["cost_usd"] == 0.01


def test_a_healthcheck_without_cwd_runs_where_the_agent_runs(tmp_path: Path) -> None:
    """AgentV: `cwd: healthcheck.cwd ?? config.cwd` (providers/cli.ts). Run from the eval folder instead,
    a check of the agent's own folder (`test -f agent.py`) looked somewhere else: it passed on a file
    the agent's folder lacks, and the cases ran where AgentV stops at the failed healthcheck."""
    repo = make_repo(tmp_path / "repo", """\
targets:
  - name: default
    provider: cli
    command: echo Paris
    cwd: sub
    healthcheck:
      command: test -f marker
""")
    (repo / "evals" / "sub").mkdir()
    (repo / "evals" / "marker").write_text("only in the eval folder, not in the agent's\n", encoding="utf-8")
    write(repo / "evals/s.eval.yaml", """
        tests:
          - {id: c, input: Capital of France?, assert: [{type: contains, value: Paris}]}
    """)
    proc = run_cli("run", "evals", "--no-cache", cwd=repo, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = rows_by_id(repo / RESULTS)["c"]
    assert row["verdict"] == "error" and "healthcheck failed" in row["error"]
    (repo / "evals" / "sub" / "marker").write_text("now in the agent's folder\n", encoding="utf-8")
    assert run_cli("run", "evals", "--no-cache", cwd=repo, timeout=120).returncode == 0
