"""A conversation test (AgentV 4.x): `mode: conversation`, `turns[]`, `aggregation`, `on_turn_failure`, `window_size`.

4.42 runs a test as a conversation when it says `mode: conversation` and has turns; otherwise it ignores the
turn keys (they have no effect: a located warning here). Its schema takes `mode: conversation` only,
`aggregation` mean, min or max, `on_turn_failure` continue or stop, `window_size` a whole number from 1, and
turns with an `input` (text or message content), an optional `expected_output` and `assertions` (strings,
one `turn-rubrics` llm-grader placed first with weight 1, and grader mappings); any other value is refused
at its line. How a conversation runs: the orchestrator's `_converse`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base.problems import Problem, no_effect
from ..errors import EvalFileError
from ..models import Conversation, EvaluatorConfig, Message, Turn
from .yaml_lines import item_line, key_line, line_of, yaml_kind

CONVERSATION_KEYS = ("mode", "turns", "aggregation", "on_turn_failure", "window_size")
ParseList = Callable[[list[Any], int], list[EvaluatorConfig]]
Reference = Callable[[list[Message]], str]
"""Parses a list of evaluator entries written at a line (the case builder's parser, with its roots and file)."""


def content_text(value: Any) -> str:
    """A turn's content as AgentV sends it: text as it is, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def parse_conversation(raw: dict[str, Any], line: int, file: Path, problems: list[Problem],
                       parse_list: ParseList, reference: Reference) -> Conversation | None:
    """The test's conversation, or None when it is not one (a turn key written anyway is a warning)."""
    written = [key for key in CONVERSATION_KEYS if key in raw]
    if not written:
        return None
    mode = raw.get("mode")
    if mode is not None and mode != "conversation":
        raise EvalFileError(key_line(raw, "mode", line), f"'mode' must be conversation, got {mode!r}",
                            "mode: conversation")
    turns = raw.get("turns")
    if turns is not None and (not isinstance(turns, list) or not turns):
        raise EvalFileError(line_of(turns, key_line(raw, "turns", line)), "'turns' must be a list of one or more turns",
                            "turns: [{input: ...}]")
    settings = _settings(raw, line)
    if mode is None or turns is None:
        missing = "turns" if turns is None else "mode: conversation"
        for key in written:
            problems.append(no_effect(file, key_line(raw, key, line), key, f"the test has no {missing}, so AgentV "
                                      "4.42 runs it as a single call"))
        return None
    at = key_line(raw, "turns", line)
    return Conversation(turns=[_turn(turn, item_line(turns, index, at), parse_list, reference)
                               for index, turn in enumerate(turns)],
                        **settings)


def _settings(raw: dict[str, Any], line: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, allowed in (("aggregation", ("mean", "min", "max")), ("on_turn_failure", ("continue", "stop"))):
        value = raw.get(key)
        if value is None:
            continue
        if value not in allowed:
            raise EvalFileError(key_line(raw, key, line), f"'{key}' must be {' or '.join(allowed)}, got {value!r}",
                                " or ".join(allowed))
        out[key] = value
    window = raw.get("window_size")
    if window is not None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise EvalFileError(key_line(raw, "window_size", line), f"'window_size' must be a whole number from 1, "
                                f"got {window!r}", "window_size: 2")
        out["window_size"] = window
    return out


def _turn(raw: Any, line: int, parse_list: ParseList, reference: Reference) -> Turn:
    if not isinstance(raw, dict):
        raise EvalFileError(line_of(raw, line), f"a turn must be a mapping, got {yaml_kind(raw)}", "- input: ...")
    unknown = sorted(set(raw) - {"input", "expected_output", "assertions"})
    if unknown:
        raise EvalFileError(key_line(raw, unknown[0], line), f"unknown key '{unknown[0]}' in a turn",
                            "input, expected_output, assertions")
    if raw.get("input") is None:
        raise EvalFileError(line, "a turn has no 'input'", "input: what the user says")
    expected = raw.get("expected_output")
    messages = [] if expected is None else [
        Message.model_validate(expected) if isinstance(expected, dict) and "content" in expected
        else Message(role="assistant", content=expected if isinstance(expected, (str, list)) else content_text(expected))]
    assertions = raw.get("assertions")
    evaluators: list[EvaluatorConfig] = []
    at = key_line(raw, "assertions", line)
    if assertions is not None and not isinstance(assertions, list):
        raise EvalFileError(line_of(assertions, at), "a turn's 'assertions' must be a list", "assertions: [...]")
    if assertions:
        # 4.42 builds the strings' grader itself: `criterion-N` items of weight 1, none required
        criteria = [a for a in assertions if isinstance(a, str)]
        entries: list[Any] = [{"name": "turn-rubrics", "type": "llm-grader", "rubrics": [
            {"id": f"criterion-{n}", "outcome": text, "weight": 1, "required": False}
            for n, text in enumerate(criteria, 1)]}] if criteria else []
        entries += [a for a in assertions if not isinstance(a, str)]
        evaluators = parse_list(entries, at)
    elif messages:  # an expected output alone: 4.42's default grader judges the reply against it
        evaluators = parse_list([{"name": "llm-grader", "type": "llm-grader"}], line)
    return Turn(input=content_text(raw["input"]), expected_messages=messages, reference_answer=reference(messages),
                evaluators=evaluators, default_grader=not assertions and bool(messages), line=line)
