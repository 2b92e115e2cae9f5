"""YAML read as AgentV reads it: the YAML 1.2 core schema, not PyYAML's YAML 1.1.

AgentV parses eval files and targets.yaml with the `yaml` package, whose default is YAML 1.2's
core schema. PyYAML resolves plain scalars by YAML 1.1's rules, under which `yes`, `no`, `on` and
`off` are booleans, `2024-01-31` is a date, `1:30` is 90 and `0777` is 511, while `1e3` stays text.
Files AgentV runs were then refused here (`contains: on` and `criteria: 2024-01-31` as not text),
and an Azure `api_version: 2024-02-01` became a date. Loaders given to `use_core_schema` resolve
plain scalars as AgentV does; everything else (quoted text, tags, the `<<` merge key PyYAML's
loaders have) is unchanged.
"""

from __future__ import annotations

import re
from typing import Any

_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
MERGE_TAG = "tag:yaml.org,2002:merge"
"""PyYAML's tag for a `<<` key (YAML 1.1's merge); the loaders refuse a key so tagged."""
MERGE_KEY_REFUSED = ("'<<' merge keys are not read: AgentV reads YAML 1.2, where '<<' is an ordinary key and "
                     "nothing is merged")
"""Why a `<<` key is refused, in eval files and targets.yaml alike. AgentV's `yaml` package, at its YAML
1.2 defaults, merges nothing, so the keys `<<` would bring are not in AgentV's test or target; merging
them (PyYAML's way) runs settings AgentV never reads, and reading `<<` as a key, AgentV's way, is surely
not what the author meant: neither is guessed."""

# YAML 1.2.2, 10.3.2 "Tag Resolution" (core schema), in the order a plain scalar is tried.
_CORE_RESOLVERS: list[tuple[str, re.Pattern[str], str]] = [
    (_NULL, re.compile(r"^(?:~|null|Null|NULL|)$"), "~nN"),
    (_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), "tTfF"),
    (_INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), "-+0123456789"),
    (_FLOAT, re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), "-+0123456789."),
]


def core_int(text: str) -> int:
    """A core-schema int: decimal (a leading 0 is still decimal), `0o` octal or `0x` hexadecimal.
    ValueError past Python's digit limit, for the caller to locate."""
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def use_core_schema(loader: Any) -> None:
    """Make `loader` (a PyYAML loader class) resolve plain scalars by the YAML 1.2 core schema."""
    kept = {tag for tag, _, _ in _CORE_RESOLVERS}
    resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {
        first: [(tag, pattern) for tag, pattern in entries if tag not in kept and tag != _TIMESTAMP]
        for first, entries in loader.yaml_implicit_resolvers.items()
    }  # what is not a plain scalar's type: the `<<` merge key, `=`
    for tag, pattern, firsts in _CORE_RESOLVERS:
        for first in firsts:
            resolvers.setdefault(first, []).append((tag, pattern))
    resolvers.setdefault("", []).append((_NULL, _CORE_RESOLVERS[0][1]))  # the empty scalar is null
    loader.yaml_implicit_resolvers = {first: entries for first, entries in resolvers.items() if entries}
    loader.add_constructor(_INT, lambda self, node: core_int(self.construct_scalar(node)))
