"""Standard-library-only helpers that both agentv-gate and the judge SDK need.

The judge SDK (`agentv_gate.sdk`) runs inside the user's own Python, which need not have
agentv-gate's dependencies (pydantic, ...) installed. So what the SDK shares with the rest of
the package (how a message's content becomes text, AgentV's snake_case key conversion) lives
here, importing nothing but the standard library, instead of being copied into the SDK.
"""

from __future__ import annotations

import json
import re
from typing import Any

_CAMEL = re.compile(r"[A-Z]")
DATA_KEYED = {"tool_calls_by_name", "tool_calls", "tool_durations"}
"""Maps whose keys are tool names (data), not field names: never case-converted."""


def _segment_text(seg: Any, with_files: bool) -> str:
    if isinstance(seg, dict):
        if seg.get("type") == "file":
            if not with_files:
                return ""
            return f'<file path="{seg.get("path", "")}">\n{seg.get("text", "")}\n</file>'
        if "value" in seg or "text" in seg:
            value = seg.get("value", seg.get("text", ""))
            return value if isinstance(value, str) else json.dumps(value, indent=2, default=str)
        return json.dumps(seg, indent=2, default=str)
    return str(seg)


def content_to_text(content: Any, with_files: bool = True) -> str:
    """Text of a message's content. Files (resolved segments) render as <file> blocks for
    prompts; `with_files=False` gives AgentV's question text, which leaves files out."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [_segment_text(seg, with_files).strip() for seg in content]
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict) and content.get("type") in ("text", "file"):
        return _segment_text(content, with_files)
    return json.dumps(content, indent=2, default=str)  # YAML dates become text


def to_snake_case(key: str) -> str:
    """AgentV's toSnakeCase: `testId` -> `test_id`; `Read` (leading capital) stays as it is."""
    if not key or key[0].isupper():
        return key
    return _CAMEL.sub(lambda m: "_" + m.group(0).lower(), key)


def to_snake_case_deep(value: Any, keep_data_keys: bool = True) -> Any:
    """AgentV's toSnakeCaseDeep; with `keep_data_keys` (the SDK reading a payload), tool-name-keyed maps keep
    their keys. AgentV itself converts those too (`searchWeb` keys `search_web`), so the payload a judge gets
    is converted with `keep_data_keys=False`."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            new_key = to_snake_case(str(key))
            if keep_data_keys and new_key in DATA_KEYED and isinstance(item, dict):
                out[new_key] = {str(k): to_snake_case_deep(v) for k, v in item.items()}
            else:
                out[new_key] = to_snake_case_deep(item, keep_data_keys)
        return out
    if isinstance(value, (list, tuple)):
        return [to_snake_case_deep(item, keep_data_keys) for item in value]
    return value
