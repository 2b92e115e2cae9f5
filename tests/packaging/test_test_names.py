"""Tests are named by the behaviour they pin, never by the tracker entry or seed that asked for it:
`test_issue_38_...` says nothing to the reader of a red run, and outlives the tracker's numbering."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
TRACKER = re.compile(r"(^|_)(issue|issues|seed|bug|ticket|round)_?\d+", re.IGNORECASE)


def test_no_test_is_named_by_a_tracker_number() -> None:
    found = [f"{path.relative_to(TESTS.parent)}:{node.lineno}: {node.name}"
             for path in sorted(TESTS.rglob("test_*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
             and node.name.lower().startswith("test") and TRACKER.search(node.name)]
    assert not found, "name these by what they check:\n" + "\n".join(found)


def test_the_pattern_finds_a_tracker_number_and_not_a_version() -> None:
    assert TRACKER.search("test_every_module_issue_38_names_is_mutated")
    assert TRACKER.search("test_seed_003_payload_fills_new_names")
    assert not TRACKER.search("test_a_4x_grader_reply_is_read_as_agentv_4_42_reads_it")
