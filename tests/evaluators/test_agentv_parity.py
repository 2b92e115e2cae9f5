"""Deterministic evaluators against AgentV 2.19's own code, through the real CLI: each case here is one
where agentv-gate once scored a pass that AgentV does not give (its JavaScript read the answer otherwise).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.agents import scripted_agent
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id


def run_one(tmp_path: Path, answer: str, case_yaml: str) -> dict[str, Any]:
    """The result row of one case answered `answer` by a mock target (`case_yaml`: the test's keys
    after `id`, `input` and `criteria`, indented by 4)."""
    targets = "targets:\n  - name: default\n    provider: mock\n    response: " + json.dumps(answer) + "\n"
    project = make_repo(tmp_path / "p", targets)
    write(project / "evals" / "x.eval.yaml", "tests:\n  - id: c\n    input: q\n    criteria: c\n" + case_yaml)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    return rows_by_id(project / RESULTS)["c"]


FIELD_TOTAL = """\
    expected_output: [{role: assistant, content: {total: 5}}]
    assert:
      - {name: fa, type: field_accuracy, fields: [{path: total, match: exact}]}
"""


@pytest.mark.parametrize("answer", [
    'Result: {"total": 5} (see {ref})',                                          # a brace after the object
    '```json\n{"total": 5}\n```\nthen run:\n```python\nx = {1: 2}\n```',          # a second fenced block
    '{placeholder} then {"total": 5}',                                          # a brace before the object
], ids=["brace-after", "second-fence", "brace-before"])
def test_field_accuracy_reads_the_answer_as_agentv_does_or_not_at_all(tmp_path: Path, answer: str) -> None:
    """AgentV strips the fence markers, takes the greedy `{...}` span and JSON.parses it; when that
    fails the answer is unreadable (score 0), not searched for another object that would pass."""
    row = run_one(tmp_path, answer, FIELD_TOTAL)
    assert row["score"] == 0.0
    assert row["scores"][0]["misses"] == ["Failed to parse candidate answer as JSON"]


def test_a_list_length_path_is_compared_as_javascript_reads_it(tmp_path: Path) -> None:
    """AgentV's resolvePath indexes with `current[part]`, so `items.length` is a list's length on both
    sides: 2 items against 3 expected is a miss, not a field with "no expected value" (a hit)."""
    row = run_one(tmp_path, '{"items": [1, 2]}', """\
    expected_output: [{role: assistant, content: {items: [1, 2, 3]}}]
    assert:
      - {name: fa, type: field_accuracy, fields: [{path: items.length, match: exact}]}
""")
    assert row["score"] == 0.0
    assert row["scores"][0]["misses"] == ["items.length (value mismatch)"]


@pytest.mark.parametrize("expected", ['"null"', '"false"', '"0"'])
def test_expected_json_that_javascript_calls_false_is_no_expected_data(tmp_path: Path, expected: str) -> None:
    """AgentV returns the last expected message's parsed JSON and then tests `!expectedData`: null,
    false and 0 are "No expected data" (score 0), not data in which every field has no expected value."""
    row = run_one(tmp_path, '{"total": 5}', f"""\
    expected_output: [{{role: assistant, content: {expected}}}]
    assert:
      - {{name: fa, type: field_accuracy, fields: [{{path: total, match: exact}}]}}
""")
    assert row["score"] == 0.0
    assert row["scores"][0]["misses"] == ["No expected data found in expected_output"]


@pytest.mark.parametrize("answer_date", [
    "2025-01-15T25:00:00",   # no such hour
    "2025-01-15T10:61",      # no such minute
    "2025-01-15Tgarbage",
    "2025-01-15 garbage",
    "2025-01-15T",
    "2025-01-15T10:00:00+25:00",
    "Jan 15, 0015",          # V8 reads a year under 100 as 19xx/20xx: 2015 here, not 15
])
def test_a_date_javascript_cannot_read_is_unparseable_not_its_leading_day(tmp_path: Path, answer_date: str) -> None:
    """AgentV reads a date with `new Date(text)` first; V8 rejects these, and AgentV's own forms do not
    match them either, so the field is an "unparseable candidate date" (0), not the day they start with."""
    expected = "0015-01-15" if answer_date.endswith("0015") else "2025-01-15"
    row = run_one(tmp_path, json.dumps({"day": answer_date}), f"""\
    expected_output: [{{role: assistant, content: {{day: "{expected}"}}}}]
    assert:
      - {{name: fa, type: field_accuracy, fields: [{{path: day, match: date}}]}}
""")
    assert row["score"] == 0.0, row["scores"][0]


@pytest.mark.parametrize("answer_date", ["2025-01-15T10:00", "2025-01-15t10:00:00.123456Z", "2025-01-15 10:00:00",
                                         "2025-01-15T10:00:00+0500", "2025-01-15T23:59:59-00:00"])
def test_timestamps_javascript_reads_still_match_their_day(tmp_path: Path, answer_date: str) -> None:
    row = run_one(tmp_path, json.dumps({"day": answer_date}), """\
    expected_output: [{role: assistant, content: {day: "2025-01-15"}}]
    assert:
      - {name: fa, type: field_accuracy, fields: [{path: day, match: date}]}
""")
    assert row["score"] == 1.0, row["scores"][0]


def test_a_field_without_match_is_refused_at_its_line(tmp_path: Path) -> None:
    """AgentV skips a field that names no `match` (with a warning), so it never counts there: scored as
    `exact` here, a field that matches lifted [a: miss, b: hit] to 0.5, a pass AgentV (0.0) does not give."""
    project = make_repo(tmp_path / "p")
    write(project / "evals" / "x.eval.yaml", """\
        tests:
          - id: c
            input: q
            expected_output: [{role: assistant, content: {a: 9, b: 2}}]
            assert:
              - name: fa
                type: field_accuracy
                fields:
                  - {path: a, match: exact}
                  - {path: b}
        """)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "x.eval.yaml:10: field_accuracy evaluator 'fa': fields[1] (b) has no 'match'" in proc.stderr


@pytest.mark.parametrize("value", ["42", "{a: 1}", "''", "[Paris]"])
def test_an_equals_value_agentv_skips_is_refused_at_its_line(tmp_path: Path, value: str) -> None:
    """AgentV reads an equals' value with asString and skips the evaluator (a warning) when it is not
    non-empty text, so it never compares `value: 42` as JSON: scored here, "42.0" passed a check AgentV
    never runs (and an empty value passed an empty answer)."""
    project = make_repo(tmp_path / "p", "targets:\n  - name: default\n    provider: mock\n    response: '42.0'\n")
    write(project / "evals" / "x.eval.yaml", f"""\
        tests:
          - id: c
            input: q
            criteria: c
            assert:
              - type: equals
                value: {value}
        """)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "x.eval.yaml:6:" in proc.stderr and "AgentV skips an equals" in proc.stderr, proc.stderr


@pytest.mark.parametrize(("assertion", "message"), [
    ("{type: contains, value: paris, case_sensitive: false}",
     "AgentV's contains reads no 'case_sensitive' (it stays case-sensitive there)"),
    ("{type: contains, value: [paris, france]}", "AgentV's contains reads one text value and skips a list"),
    ("{type: contains, value: [paris, rome], any: true}", "AgentV's contains reads no 'any'"),
    ("{type: contains, value: paris, any: false}", "AgentV's contains reads no 'any'"),
    ("{type: contains-all, value: paris}", "AgentV skips type: contains-all when its value is not a list"),
    ("{type: icontains-any, value: paris}", "AgentV skips type: icontains-any when its value is not a list"),
    ("{type: icontains, value: [paris, france]}", "AgentV's icontains reads one text value and skips a list"),
    ("{type: equals, value: 'Paris', trim: false}", "AgentV always trims both sides"),
])
def test_a_contains_or_equals_setting_agentv_does_not_read_is_refused(tmp_path: Path, assertion: str,
                                                                      message: str) -> None:
    """agentv-gate's own switches on AgentV's assertions: AgentV ignores the key (`case_sensitive: false` on
    `contains` stays case-sensitive, so "Paris" passed `paris` here and fails there) or skips the assertion
    (a list for `contains`, text for `contains-all`). Each is refused at its line, naming the type to use."""
    project = make_repo(tmp_path / "p", "targets:\n  - name: default\n    provider: mock\n    response: ' Paris'\n")
    write(project / "evals" / "x.eval.yaml",
          "tests:\n  - id: c\n    input: q\n    criteria: c\n    assert:\n      - " + assertion + "\n")
    proc = run_cli("run", "evals", "--no-cache", "--allow-unknown-keys", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "x.eval.yaml:6: " in proc.stderr and message in proc.stderr, proc.stderr


def test_an_exploration_ratio_past_the_tolerance_by_float_error_is_a_miss(tmp_path: Path) -> None:
    """AgentV checks `Math.abs(ratio - target) <= tolerance` with no slack: 4 reads of 5 calls against 0.6 ± 0.2
    is |0.8 - 0.6| = 0.20000000000000007 there, a miss; a 1e-9 of slack made it a hit (and the case a pass)."""
    calls = [{"tool": "Read", "input": {}}] * 4 + [{"tool": "edit", "input": {}}]
    project = scripted_agent(tmp_path / "p", {"q": {"text": "Done.", "output_messages": [
        {"role": "assistant", "content": "Done.", "tool_calls": calls}]}})
    write(project / "evals" / "x.eval.yaml", """\
        tests:
          - id: c
            input: q
            criteria: c
            assert:
              - {name: lean, type: execution-metrics, target_exploration_ratio: 0.6, exploration_tolerance: 0.2}
        """)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = rows_by_id(project / RESULTS)["c"]
    assert row["score"] == 0.0
    assert row["scores"][0]["misses"] == [
        "Exploration ratio 0.80 outside tolerance of target 0.6 (diff: 0.20, tolerance: 0.2)"]


def test_negate_on_an_exact_trajectory_is_refused(tmp_path: Path) -> None:
    """An exact trajectory with an extra call scores 2/3 here and 1.0 in AgentV (a stricter gate, on purpose);
    negated, that is 1/3 here against AgentV's 0: looser, so the negation is refused at its line."""
    project = make_repo(tmp_path / "p")
    write(project / "evals" / "x.eval.yaml", """\
        tests:
          - id: c
            input: q
            criteria: c
            assert:
              - {name: t, type: tool-trajectory, mode: exact, expected: [{tool: a}, {tool: b}], negate: true}
        """)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "x.eval.yaml:6: tool_trajectory evaluator 't': negate: true on mode exact" in proc.stderr, proc.stderr


def test_json_integers_are_javascript_numbers(tmp_path: Path) -> None:
    """JSON.parse reads every number as a double: 9007199254740993 is 9007199254740992 there (a field match in
    AgentV), and a 5000-digit integer is Infinity, still valid JSON; Python's json refused the latter (past
    its 4300-digit limit), so a negated is_json passed an answer AgentV calls JSON."""
    row = run_one(tmp_path, '{"id": 9007199254740993}', """\
    expected_output: [{role: assistant, content: '{"id": 9007199254740992}'}]
    assert:
      - {name: fa, type: field_accuracy, fields: [{path: id, match: exact}]}
""")
    assert row["score"] == 1.0, row["scores"][0]
    row = run_one(tmp_path / "big", "1" * 5000, """\
    assert:
      - {name: not-json, type: is-json, negate: true}
""")
    assert row["score"] == 0.0, row["scores"][0]


@pytest.mark.parametrize("message", [
    {"role": "assistant", "content": "", "tool_calls": [{"name": "search", "input": {"q": "x"}}]},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "search", "arguments": '{"q": "x"}'}}]},
    {"role": "assistant", "content": "", "toolCalls": [{"tool": "search", "input": {"q": "x"}}]},
    {"role": "assistant", "content": "", "tool_calls": [{"tool": "search", "args": {"q": "x"}}]},
], ids=["name", "openai-function", "toolCalls", "args"])
def test_tool_calls_are_read_in_agentv_shape_only(tmp_path: Path, message: dict[str, Any]) -> None:
    """AgentV's cli provider reads `tool_calls: [{tool, input, output, id, duration_ms}]` and drops a call
    without a string `tool` (and reads no `args`): a call spelled otherwise is no call there, so a trajectory
    needing `search` with `{q: x}` fails. agentv-gate read those spellings too and passed it."""
    project = scripted_agent(tmp_path / "p", {"q": {"text": "Done.", "output_messages": [
        message, {"role": "assistant", "content": "Done."}]}})
    write(project / "evals" / "x.eval.yaml", """\
        tests:
          - id: c
            input: q
            criteria: c
            assert:
              - {name: t, type: tool-trajectory, mode: in_order, expected: [{tool: search, args: {q: x}}]}
        """)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert rows_by_id(project / RESULTS)["c"]["score"] == 0.0


def test_a_tool_duration_is_read_from_duration_ms_only(tmp_path: Path) -> None:
    """`durationMs` is not AgentV's wire name: unread there, the latency check is left out (1/2 here), where
    reading it added a hit (2/3, a pass at 0.6)."""
    calls = [{"tool": "a", "input": {}, "durationMs": 5}, {"tool": "c", "input": {}}]
    project = scripted_agent(tmp_path / "p", {"q": {"text": "Done.", "output_messages": [
        {"role": "assistant", "content": "", "tool_calls": calls}]}})
    write(project / "evals" / "x.eval.yaml", """\
        tests:
          - id: c
            input: q
            criteria: c
            assert:
              - {name: t, type: tool-trajectory, mode: in_order, expected: [{tool: a, max_duration_ms: 100}, {tool: b}]}
        """)
    proc = run_cli("run", "evals", "--no-cache", cwd=project)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert rows_by_id(project / RESULTS)["c"]["score"] == 0.5


@pytest.mark.parametrize(("written", "expected", "score"), [
    ("04/03/2025", "2025-03-04", 0.0),   # V8 reads month first whatever `formats` says: April 3, a miss
    ("04/03/2025", "2025-04-03", 1.0),
    ("02/13/2025", "2025-02-13", 1.0),   # V8 reads it, though DD/MM would make month 13
    ("13/02/2025", "2025-02-13", 1.0),   # V8 cannot: AgentV's own day-first reading applies
])
def test_a_slash_date_is_read_month_first_where_v8_reads_it(tmp_path: Path, written: str, expected: str,
                                                             score: float) -> None:
    """AgentV tries `new Date(text)` before looking at `formats`, and V8 reads 04/03/2025 as April 3: with
    `formats: [DD/MM/YYYY]` agentv-gate read March 4 and passed what AgentV fails."""
    row = run_one(tmp_path, json.dumps({"d": written}), f"""\
    expected_output: [{{role: assistant, content: {{d: "{expected}"}}}}]
    assert:
      - {{name: fa, type: field_accuracy, fields: [{{path: d, match: date, formats: [DD/MM/YYYY]}}]}}
""")
    assert row["score"] == score, row["scores"][0]
