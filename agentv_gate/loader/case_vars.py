"""A test's `vars` (AgentV 4.x): `{{name}}` placeholders in the test's fields filled from its own data.

As 4.42's `interpolateRawEvalCase` does it: `vars` is a mapping; `{{name}}` or `{{a.b}}` (a dotted path into
it) is replaced in `criteria`, `expected_outcome`, `input`, `input_files` and `expected_output`, and in the
suite's `input` and `input_files` as that test gets them, never in assertions. A string that is a single
placeholder becomes the value itself (a mapping stays a mapping); inside longer text a value that is not
text is written as JSON. A placeholder naming nothing is left as written, so other template syntaxes pass.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ..base.jscompat import js_number

TEMPLATED_FIELDS = ("criteria", "expected_outcome", "input", "input_files", "expected_output")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_WHOLE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$")
_MISSING = object()


def _lookup(variables: dict[str, Any], path: str) -> Any:
    current: Any = variables
    for segment in path.split("."):
        if not isinstance(current, dict) or segment not in current:
            return _MISSING
        current = current[segment]
    return current


def _as_js(value: Any) -> Any:
    """Numbers as JavaScript writes them (`1.0` is `1`), at any depth."""
    if isinstance(value, dict):
        return {key: _as_js(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_js(item) for item in value]
    number = js_number(value)
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e21:
        return int(number)
    return value


def _as_text(value: Any) -> str:
    """JavaScript's `JSON.stringify` for a value inside longer text (text itself as it is)."""
    if isinstance(value, str):
        return value
    return json.dumps(_as_js(value), ensure_ascii=False, separators=(",", ":"))


def render(value: Any, variables: dict[str, Any]) -> Any:
    """`value` with every placeholder `variables` fills; mappings and lists keep their lines."""
    if isinstance(value, str):
        whole = _WHOLE.match(value)
        if whole:
            found = _lookup(variables, whole.group(1))
            return value if found is _MISSING else copy.deepcopy(found)

        def fill(match: re.Match[str]) -> str:
            found = _lookup(variables, match.group(1))
            return match.group(0) if found is _MISSING else _as_text(found)

        return _PLACEHOLDER.sub(fill, value)
    if isinstance(value, list):
        rendered = copy.copy(value)
        rendered[:] = [render(item, variables) for item in value]
        return rendered
    if isinstance(value, dict):
        filled = copy.copy(value)
        for key, item in value.items():
            filled[key] = render(item, variables)
        return filled
    return value


def case_variables(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The test's `vars` when it is a mapping (4.42 reads no other shape); else None."""
    variables = raw.get("vars")
    return variables if isinstance(variables, dict) and variables else None


def rendered_case(raw: Any) -> Any:
    """The test with its own fields rendered from its `vars` (the suite's are rendered where they are read)."""
    variables = case_variables(raw) if isinstance(raw, dict) else None
    if variables is None:
        return raw
    out = copy.copy(raw)
    for key in TEMPLATED_FIELDS:
        if key in raw:
            out[key] = render(raw[key], variables)
    return out
