"""`provider_batching: true` on a cli target, as AgentV 2.19 runs it: one run of the command answers
every case of the suite from a JSONL file; a case without a record is its error; a batch that cannot
be run or read falls back to one run per case."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

RUNNER = """\
import json, pathlib, sys
args = sys.argv[1:]
here = pathlib.Path(__file__).parent
with open(here / "runs.log", "a") as log:
    log.write(args[1] + "\\n")
out = args[args.index("--output") + 1]
if args[1] != "batch":  # one case on its own
    pathlib.Path(out).write_text(json.dumps({"text": f"decision for {args[1]}: CLEAR"}))
    sys.exit(0)
if (here / "broken").exists():
    pathlib.Path(out).write_text("not json\\n")
    sys.exit(0)
screened = {"role": "assistant", "tool_calls": [{"tool": "screen", "input": {"id": "clear"},
                                                  "output": {"decision": "CLEAR"}}]}
records = [{"id": "clear", "output": [screened, {"role": "assistant", "content": "decision: CLEAR"}],
            "duration_ms": 7},
           {"id": "review", "text": "decision: REVIEW"}]
pathlib.Path(out).write_text("".join(json.dumps(r) + "\\n" for r in records))
"""

TARGETS = """\
targets:
  - name: default
    provider: cli
    provider_batching: true
    command: python3 runner.py --eval {EVAL_ID} --output {OUTPUT_FILE}
"""

SUITE = """\
tests:
  - id: clear
    input: Screen the clear case
    assert:
      - {type: contains, value: CLEAR}
      - {type: tool-trajectory, mode: any_order, minimums: {screen: 1}}
  - {id: review, input: Screen the review case, assert: [{type: contains, value: REVIEW}]}
  - {id: missing, input: Screen a case the runner forgets, assert: [{type: contains, value: CLEAR}]}
"""


def test_one_batch_run_answers_every_case_and_a_case_without_a_record_is_its_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "evals/runner.py", RUNNER)
    write(repo / "evals/s.eval.yaml", SUITE)
    ran = run_cli("run", "evals", "--no-cache", "--workers", "3", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert (repo / "evals/runs.log").read_text().splitlines() == ["batch"]  # once, for the whole suite
    rows = rows_by_id(repo / RESULTS)
    assert rows["clear"]["verdict"] == "pass" and rows["clear"]["score"] == 1.0, rows["clear"]
    assert rows["clear"]["candidate_answer"] == "decision: CLEAR"
    assert rows["clear"]["trace"]["tool_calls_by_name"] == {"screen": 1}
    assert rows["review"]["verdict"] == "pass" and rows["review"]["candidate_answer"] == "decision: REVIEW"
    missing = rows["missing"]  # scored on AgentV's error text, and an error
    assert missing["verdict"] == "error" and missing["error"] == "target default: Batch output missing id 'missing'"
    assert missing["candidate_answer"] == "Error: Batch output missing id 'missing'"
    assert missing["misses"] == ['Output does not contain "CLEAR"'], missing


def test_a_batch_that_cannot_be_read_falls_back_to_one_run_per_case(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "evals/runner.py", RUNNER)
    write(repo / "evals/broken", "")
    write(repo / "evals/s.eval.yaml", SUITE)
    ran = run_cli("run", "evals", "--no-cache", "--workers", "1", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # `review` looks for REVIEW in a CLEAR answer
    runs = (repo / "evals/runs.log").read_text().splitlines()
    assert runs[0] == "batch" and sorted(runs[1:]) == ["clear", "missing", "review"]
    rows = rows_by_id(repo / RESULTS)
    assert rows["missing"]["verdict"] == "pass" and rows["missing"]["candidate_answer"] == "decision for missing: CLEAR"
    assert rows["review"]["verdict"] == "fail"


def test_a_batch_record_whose_text_is_not_text_answers_its_compact_json(tmp_path: Path) -> None:
    """AgentV's batch reader answers `JSON.stringify(text)` for a `text` that is not a string: compact JSON, with
    JavaScript's numbers (`2.0` is `2`); the gate answered JavaScript's String() of it, `[object Object]` (43.6)."""
    runner = RUNNER.replace('{"id": "review", "text": "decision: REVIEW"}',
                            '{"id": "review", "text": {"decision": "REVIEW", "scores": [2.0, 0.5], "note": None}}')
    repo = make_repo(tmp_path / "repo", TARGETS)
    write(repo / "evals/runner.py", runner)
    write(repo / "evals/s.eval.yaml", """\
tests:
  - id: clear
    input: Screen the clear case
    assert: [{type: contains, value: CLEAR}]
  - id: review
    input: Screen the review case
    assert: [{type: equals, value: '{"decision":"REVIEW","scores":[2,0.5],"note":null}'}]
""")
    run_cli("run", "evals", "--no-cache", cwd=repo)
    row = rows_by_id(repo / RESULTS)["review"]
    assert row["score"] == 1, row
