"""How an AgentV 4.x code-grader's finished run is read: AgentV 4.42.4's `CodeGrader` reply rules.

* exit 0 and a JSON object: `score` when it is a number, else the share of `assertions` passed (0 with
  none); `assertions: [{text, passed, evidence?}]` entries without a text string are dropped;
* exit 0 and anything else on stdout (prose, a bare number): a pass, scored 1, stdout the assertion;
  but stdout that is JSON-shaped (it starts with `{`, or with `[` and a JSON value, or a line of it starts
  with `{`) and is not exactly one readable object (`{"score": NaN}`, a log line beside the result, two
  objects, nesting too deep to read) makes the grader an error, never the exit-code pass 4.42 gives
  what `JSON.parse` cannot read: its score may well have said fail;
* a non-zero exit with plain stdout and nothing on stderr: a fail, scored 0, stdout the assertion
  (the exit-code convention: a grader may be a shell check);
* a non-zero exit with JSON on stdout or text on stderr: the grader failed.

Where 4.42 clamps or coerces, agentv-gate keeps its deliberate strictness (README, "Deliberate
differences"): a score outside 0..1 or an assertion whose `passed` is not true/false (4.42 takes its
JavaScript truth: `"false"` passes) makes the evaluator an error, never a clamped pass; so do a
timeout and a crash, which 4.42 scores 0. The reader is pure: (result) -> (reply, None) or (None, why).
"""

from __future__ import annotations

from typing import Any

from ..base.jscompat import is_finite_number, js_number, js_trim
from ..transport.process import ScriptResult
from .json_extract import loads_strict

PREVIEW_CHARS = 200
ONE_OBJECT_EXPECTED = (' (expected exactly one JSON object with a finite "score" and/or "assertions" and nothing '
                       'else on stdout: write logs to stderr; plain text is read by the exit code)')
_JSON_VALUE_STARTS = tuple('{["-0123456789]') + ("true", "false", "null")
ASSERTIONS_SHAPE = ' (expected a list of {"text": ..., "passed": true|false, "evidence"?: ...})'


def read_grader_reply(result: ScriptResult, max_output_bytes: int) -> tuple[dict[str, Any] | None, str | None]:
    """({score, assertions, details?, reasoning?}, None) as 4.42 scores the run, or (None, why it failed)."""
    if result.spawn_error is not None or result.timed_out or (result.exit_code or 0) < 0:
        return None, result.failure() or "did not finish"
    if result.stdout_truncated:
        return None, (f"printed more than {max_output_bytes} bytes on stdout (the cap; it printed "
                      f"{result.stdout_bytes}), so its result cannot be read whole")
    stdout = js_trim(result.stdout)
    exit_code = result.exit_code or 0
    if exit_code != 0 and (stdout.startswith(("{", "[")) or js_trim(result.stderr)):
        return None, f"exited with code {exit_code}"
    try:
        parsed = loads_strict(stdout) if stdout else None
    except ValueError as exc:
        parsed, unreadable = None, str(exc)
    else:
        unreadable = f"a JSON {type(parsed).__name__}, not an object"
    if not isinstance(parsed, dict) and exit_code == 0 and _json_shaped(stdout):
        preview = stdout[:PREVIEW_CHARS] + ("..." if len(stdout) > PREVIEW_CHARS else "")
        return None, (f"printed stdout that looks like JSON but is not one readable JSON object ({unreadable}): "
                      f"{preview!r}{ONE_OBJECT_EXPECTED}")
    if not isinstance(parsed, dict):  # the exit-code convention: stdout is the assertion's text
        passed = exit_code == 0
        return {"score": 1.0 if passed else 0.0,
                "assertions": [{"text": stdout or f"exit {exit_code}", "passed": passed}]}, None
    assertions, problem = _assertions(parsed.get("assertions"))
    if problem is not None:
        return None, problem
    score = parsed.get("score")
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        if not is_finite_number(score):
            return None, f"printed a score that is not a number: {js_number(score)!r}"
        if not 0.0 <= score <= 1.0:
            return None, f"printed a score of {score}, outside 0..1"
    else:  # no number: passed / total, as 4.42 derives it
        score = sum(1 for item in assertions if item["passed"]) / len(assertions) if assertions else 0.0
    reply: dict[str, Any] = {"score": float(score), "assertions": assertions}
    for key in ("details", "reasoning"):
        if key in parsed:
            reply[key] = parsed[key]
    return reply, None


def _json_shaped(stdout: str) -> bool:
    """Whether stdout was meant as the JSON protocol: it starts with `{`, or with `[` and what can begin a
    JSON value (`[PASS] ok` is a shell check's prose), or one of its lines starts with `{` (a result
    beside a log line)."""
    if stdout.startswith("[") and js_trim(stdout[1:]).startswith(_JSON_VALUE_STARTS):
        return True
    return any(js_trim(line).startswith("{") for line in stdout.splitlines())


def _assertions(value: Any) -> tuple[list[dict[str, Any]], str | None]:
    """4.42's entries: those with a text string kept, others dropped as 4.42 drops them."""
    if not isinstance(value, list):
        return [], None
    kept: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        if not isinstance(item.get("passed"), bool):
            return [], f"printed assertions[{index}] without a true/false 'passed'{ASSERTIONS_SHAPE}"
        # the text alone, as 4.42 writes it (its evidence apart, in assertions[].evidence)
        kept.append({"text": item["text"], "passed": item["passed"]})
    return kept, None
