"""The forms AgentV 3.0 and later read that 2.19 does not, read as AgentV 4.42.4 reads them.

A file's generation shows in its forms: a `code-grader` or `llm-grader`, suite `governance:` or
`category:`, `execution.workers` or `budget_usd`, a criterion written as a plain string in an assertion
list. Where the two generations read the same form differently (a suite's `metadata` reaching each
case, a `<<` merge key), the file's forms decide; an evaluator's own type name decides its payload
and prompt (generations.py).

* `governance:` and `category:` describe the suite; 4.42 hands the suite's `metadata` (with
  `governance` inside it, the top-level one winning) to every case, merged into the case's own:
  lists concatenate suite-first without repeats, mappings merge key by key, the case's scalars win.
* A string in an assertion list is a rubric criterion: all of a list's strings become one `rubrics`
  evaluator at the first string's place, weighted by how many there are (each string counts as
  much as any other assertion).
"""

from __future__ import annotations

import json
from typing import Any

from ..base.generations import is_4x_type

SUITE_KEYS_4X = ("governance", "category")
"""Suite keys only AgentV 3.0+ reads (descriptive: they change no score; they reach cases as metadata)."""
SUITE_EXECUTION_KEYS_4X = ("workers", "budget_usd")
"""Suite `execution` keys only AgentV 4.x reads: a per-suite worker cap, and `total_budget_usd`'s new name."""
EVALUATOR_LIST_KEYS = ("assertions", "assert", "evaluators")


def _types_in(entries: Any) -> bool:
    """Whether an evaluator list holds a 4.x type name or a plain-string criterion, at any depth."""
    if not isinstance(entries, list):
        return False
    for entry in entries:
        if isinstance(entry, str) and not is_type_name(entry):
            return True
        if isinstance(entry, dict):
            if is_4x_type(entry.get("type")) or "min_score" in entry:
                return True
            for key in EVALUATOR_LIST_KEYS:  # a composite's members (a loop, not any(): asked of every test)
                nested = entry.get(key)
                if nested is not None and _types_in(nested):
                    return True
    return False


def is_type_name(text: str) -> bool:
    """A string that names an evaluator type (`is-json`) rather than writing a criterion: one word."""
    return bool(text) and not any(ch.isspace() for ch in text.strip()) and text.strip() == text


def header_is_4x(header: Any) -> bool:
    """Whether a suite's settings use a form only AgentV 3.0+ reads."""
    if not isinstance(header, dict):
        return False
    execution = header.get("execution")
    execution = execution if isinstance(execution, dict) else {}
    return (any(key in header for key in SUITE_KEYS_4X) or any(key in execution for key in SUITE_EXECUTION_KEYS_4X)
            or any(_types_in(header.get(key)) for key in EVALUATOR_LIST_KEYS) or _types_in(execution.get("evaluators")))


def case_is_4x(raw: Any) -> bool:
    """Whether a test uses a form only AgentV 3.0+ reads (in its evaluator lists)."""
    if not isinstance(raw, dict):
        return False
    for key in EVALUATOR_LIST_KEYS:
        if _types_in(raw.get(key)):
            return True
    execution = raw.get("execution")
    return isinstance(execution, dict) and _types_in(execution.get("evaluators"))


def suite_metadata_payload(header: Any) -> dict[str, Any] | None:
    """4.42's `extractSuiteMetadataPayload`: the suite's `metadata`, with a top-level `governance` mapping
    in it (winning over `metadata.governance`); None when empty."""
    if not isinstance(header, dict):
        return None
    metadata = header.get("metadata")
    payload: dict[str, Any] = dict(metadata) if isinstance(metadata, dict) else {}
    governance = header.get("governance")
    if isinstance(governance, dict):
        payload["governance"] = governance
    return payload or None


def merge_metadata(case: dict[str, Any] | None, suite: dict[str, Any] | None) -> dict[str, Any] | None:
    """4.42's `mergeSuiteMetadataPayload`: lists concatenate suite-first without repeats, mappings merge
    key by key, the case's scalars win, the suite fills what the case omits."""
    if not suite:
        return case
    result: dict[str, Any] = dict(case or {})
    for key, suite_value in suite.items():
        case_value = result.get(key)
        if isinstance(suite_value, list) and isinstance(case_value, list):
            seen: set[str] = set()
            merged: list[Any] = []
            for value in [*suite_value, *case_value]:
                marker = value if isinstance(value, str) else json.dumps(value, sort_keys=False, default=str)
                if marker not in seen:
                    seen.add(marker)
                    merged.append(value)
            result[key] = merged
        elif isinstance(suite_value, dict) and isinstance(case_value, dict):
            result[key] = merge_metadata(case_value, suite_value)
        elif key not in result:
            result[key] = suite_value
    return result


def group_criteria(entries: list[Any]) -> list[Any]:
    """4.42's string shorthand: every plain-string entry of the list becomes one criterion of a single
    `rubrics` evaluator placed where the first string was, with weight = the number of criteria. Empty
    strings are dropped (4.42 skips them); a list with no strings is returned as it is."""
    first = next((index for index, entry in enumerate(entries) if isinstance(entry, str)), None)
    if first is None:
        return entries
    criteria = [entry.strip() for entry in entries if isinstance(entry, str) and entry.strip()]
    out = [entry for entry in entries[:first] if not isinstance(entry, str)]
    if criteria:
        out.append({"type": "rubrics", "criteria": criteria, "weight": len(criteria)})
    out.extend(entry for entry in entries[first:] if not isinstance(entry, str))
    return out
