"""Every key in a suite is understood or reported: the shared check, and what is known but not run yet.

A key nobody reads is a setting whose meaning was dropped: `asserts:` for `assert:` once fell
back to the default judge, and a suite-level `treshold: 0.99` was ignored, so both cases passed.
Each level (suite, test, `execution`, evaluator, targets.yaml entry) declares the keys its reader
reads (`loader/eval_file_keys.py`, `targets/settings.py`); `unknown_key_problems` reports every other one at its
line, with a suggestion.

`NOT_YET` is the one list of what AgentV (2.19 or 4.42) knows and agentv-gate does not run yet. Such a key
always stops the run (`--allow-unknown-keys` never covers it): running the suite without it would
score it as AgentV would not. Whoever implements one deletes its entry here and declares the key
in its level's table.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

NOT_YET: dict[str, dict[str, str]] = {
    "suite": {
    },
    "test": {
    },
    "execution": {
        "workspace": "workspaces and lifecycle hooks",
    },
    "workspace": {
        "path": "reusable workspaces at a fixed path",
        "docker": "graders run in a Docker workspace",
    },
    "evaluator": {},
    "target": {
        "fallback_targets": "fallback targets",
    },
}
"""level -> key -> the AgentV feature it belongs to. Evaluator types use their own level (`code_judge`)
on top of `evaluator`."""

NOT_YET_EVALUATOR_TYPES: dict[str, str] = {}
"""Evaluator `type`s (lower case, `-` as `_`) AgentV 2.19 runs and agentv-gate does not yet."""

NOT_YET_PROVIDERS: dict[str, str] = {
    "codex": "the Codex agent provider",
    "codex-cli": "the Codex agent provider",
    "claude": "the Claude Code agent provider",
    "claude-code": "the Claude Code agent provider",
    "claude-sdk": "the Claude Code agent provider",
    "copilot-sdk": "the Copilot SDK agent provider",
    "copilot_sdk": "the Copilot SDK agent provider",
    "pi": "the Pi coding agent provider",
    "vscode": "the VS Code agent provider",
    "vscode-insiders": "the VS Code Insiders agent provider",
    "pi-coding-agent": "the Pi coding agent provider",
    "pi-agent-sdk": "the Pi agent SDK provider",
    "cc-mirror": "the Claude CLI agent provider of AgentV 4.x, through cc-mirror",
    "pi-cli": "the Pi CLI agent provider of AgentV 4.x",
    "copilot-log": "AgentV 4.x's replay of a Copilot session log",
    "openrouter": "AgentV 4.x's OpenRouter provider",
    "transcript": "AgentV 4.x's replay of a recorded transcript",
    "bedrock": "AgentV's Bedrock provider",
    "vertex": "AgentV's Vertex provider",
}
"""targets.yaml `provider`s (lower case) AgentV 2.19 or 4.42 knows (4.42's `KNOWN_PROVIDERS` and
`PROVIDER_ALIASES`) and agentv-gate does not run yet, with the aliases
AgentV's `resolveTargetDefinition` reads for them (`claude`, `copilot`, `pi`, ...): refused when a run uses
such a target, while an unused one beside it in a shared targets.yaml is a located warning."""


@dataclass(frozen=True)
class KeyProblem:
    """One reported key: where, what, and whether `--allow-unknown-keys` may make it a warning."""

    line: int
    message: str
    unknown: bool


def not_yet_message(name: str, feature: str) -> str:
    return f"'{name}' is an AgentV feature agentv-gate does not run yet ({feature})"


def closest(key: str, known: Collection[str]) -> str | None:
    """The known name closest to `key` (case aside), or None when nothing is close."""
    lowered = {k.lower(): k for k in sorted(known)}  # sorted: `baseUrl` and `baseURL` suggest one, whatever the hash seed
    close = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def did_you_mean(key: str, known: Collection[str]) -> str:
    """` (did you mean 'assert'?)`, or "" when nothing known is close."""
    close = closest(key, known)
    return f" (did you mean '{close}'?)" if close else ""


def unknown_key_problems(
    mapping: Mapping[Any, Any],
    known: Collection[str],
    not_yet: Mapping[str, str],
    where: str,
    line_of_key: Callable[[str], int],
    passes_through: Callable[[str], bool] | None = None,
) -> list[KeyProblem]:
    """A problem for each key of `mapping` that is neither `known` nor passed through.

    `not_yet` keys are plain errors; any other unread key is `unknown`, which `--allow-unknown-keys`
    may turn into a warning. `passes_through` keeps keys a reader hands on unread (a code judge's
    extra keys go to the script as its config).
    """
    problems: list[KeyProblem] = []
    for raw_key in mapping:
        key = str(raw_key)
        if key in known:
            continue
        if key in not_yet:
            problems.append(KeyProblem(line_of_key(key), not_yet_message(key, not_yet[key]), unknown=False))
            continue
        if passes_through is not None and passes_through(key):
            continue
        problems.append(KeyProblem(line_of_key(key), f"unknown key '{key}' in {where}{did_you_mean(key, known)}",
                                   unknown=True))
    return problems


SELF_CHECK = os.environ.get("AGENTV_GATE_SELF_CHECK") == "1"
"""Set by the test suite (tests/conftest.py): the eval-file loader then reads each test through a
`DeclaredOnly` view. Otherwise that view is the mapping itself: the check guards our readers, not the
user's files (an unknown key is reported either way), and it cost a tenth of loading a long suite."""


class DeclaredOnly(dict):  # type: ignore[type-arg]
    """A mapping its reader may look up only declared keys of; looking up any other key is a bug of ours.

    This is what keeps the declared tables and the readers in step: a reader that starts to read a
    new key fails (AssertionError naming the table to add it to) until the key is declared, and a
    declared key is never reported as unknown. Iterating is free: the unknown-key check walks every
    key. A subclass names its reader and its table for the message.
    """

    reader = "a reader"
    table = "its table of keys"

    def __init__(self, data: Mapping[Any, Any], declared: Collection[str]) -> None:
        super().__init__(data)
        self.declared = declared if type(declared) is frozenset else frozenset(declared)

    def _undeclared(self, key: object) -> AssertionError:
        return AssertionError(f"{self.reader} reads undeclared key {key!r}: add it to {self.table}")

    # The check is written out in each method, not called: the loader reads some forty keys a case,
    # and the calls were a tenth of validating a long suite.
    def get(self, key: Any, default: Any = None) -> Any:
        if key not in self.declared:
            raise self._undeclared(key)
        return dict.get(self, key, default)

    def __getitem__(self, key: Any) -> Any:
        if key not in self.declared:
            raise self._undeclared(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        if key not in self.declared:
            raise self._undeclared(key)
        return dict.__contains__(self, key)
