"""What a run leaves on disk, read back the way CI reads it; and `CaseResult` rows to feed reporters.

One reader for results.jsonl, one JUnit check against the bundled Jenkins XSD, one way to
build a result row, so the report tests and the end-to-end tests agree on what they check.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import xmlschema

from agentv_gate.models import CaseResult, Verdict
from agentv_gate.report.junit import SCHEMA_PATH


def case_result(eval_id: str, verdict: Verdict = "pass", **fields: Any) -> CaseResult:
    """A result row with the fields a reporter needs; a pass scores 1.0, anything else 0.0 unless given."""
    defaults: dict[str, Any] = {"suite": "evals/a.yaml", "file": "evals/a.yaml", "line": 1,
                                "score": 1.0 if verdict == "pass" else 0.0, "threshold": 0.8}
    return CaseResult(eval_id=eval_id, verdict=verdict, **{**defaults, **fields})


RESULTS = Path(".agentv-gate") / "results.jsonl"
"""Where `run` writes results.jsonl unless told otherwise, relative to the folder it runs in."""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a results.jsonl file, blank lines skipped."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def rows_by_id(path: Path, key: str = "eval_id") -> dict[str, dict[str, Any]]:
    """The rows of a results.jsonl file by case id (`eval_id`, or AgentV's `test_id`), for a test that
    looks its cases up by name."""
    return {row[key]: row for row in read_rows(path)}


@cache
def junit_schema() -> xmlschema.XMLSchema:
    """The bundled Jenkins junit-10.xsd, parsed once per test process (it is slow to build)."""
    return xmlschema.XMLSchema(str(SCHEMA_PATH))


def checked_junit(path: Path) -> ET.Element:
    """Parse the JUnit file (well-formed) and validate it against the bundled Jenkins XSD."""
    root = ET.parse(path).getroot()
    junit_schema().validate(str(path))
    return root


def junit_cases(root: ET.Element) -> dict[str, str]:
    """testcase name -> 'pass' | 'fail' | 'error'; a ` [target]` suffix (several targets in a run) dropped."""
    out: dict[str, str] = {}
    for tc in root.iter("testcase"):
        state = "error" if tc.find("error") is not None else "fail" if tc.find("failure") is not None else "pass"
        out[re.sub(r" \[[^\]]*\]$", "", tc.get("name") or "")] = state
    return out
