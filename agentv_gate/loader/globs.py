"""Glob patterns as AgentV's project config writes them (`**/*.instructions.md`, `**/evals/**/dataset*.yaml`).

AgentV matches `guideline_patterns` with micromatch and `eval_patterns` with fast-glob; both read the
same syntax: `**` spans folders (a leading `**/` also matches none), `*` and `?` stay within one
folder name and do not match a leading dot, `{a,b}` is either. Python's fnmatch lets `*` cross `/`,
which would call `docs/a/b.md` a match of `docs/*.md`, so the patterns are translated here instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence


def _alternatives(body: str) -> list[str]:
    """The comma-separated parts of a `{...}` body, nested braces kept whole."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:index])
            start = index + 1
    parts.append(body[start:])
    return parts


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append(r"(?:(?!\.)[^/]*/)*")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(r"(?:(?!\.)[^/]*(?:/(?!\.)[^/]*)*)?")
            index += 2
            continue
        if char == "*":
            at_start = not out or out[-1].endswith("/")
            out.append(r"(?!\.)[^/]*" if at_start else "[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            close = _matching_brace(pattern, index)
            if close < 0:
                out.append(re.escape(char))
            else:
                out.append("(?:" + "|".join(_translate(part) for part in _alternatives(pattern[index + 1:close])) + ")")
                index = close + 1
                continue
        elif char == "[":
            close = pattern.find("]", index + 1)
            if close < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1:close]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
                index = close + 1
                continue
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _matching_brace(pattern: str, start: int) -> int:
    depth = 0
    for index in range(start, len(pattern)):
        if pattern[index] == "{":
            depth += 1
        elif pattern[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """`pattern` as a regular expression matching a whole `/`-separated relative path."""
    body = pattern[2:] if pattern.startswith("./") else pattern
    return re.compile(_translate(body) + r"\Z", re.IGNORECASE if ignore_case else 0)


def matches_any(path: str, patterns: Sequence[str], ignore_case: bool = False) -> bool:
    """Whether the relative `path` (with `/`) matches any of `patterns`; none matches nothing."""
    return any(compile_glob(pattern, ignore_case).match(path) for pattern in patterns)
