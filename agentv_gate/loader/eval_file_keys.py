"""The keys an eval file may hold, per level, as the loader reads them: one table for the reader and the checker.

The case builder reads a test through `declared(raw, TEST_KEYS)`, which under the test suite
(`SELF_CHECK`) refuses (AssertionError, a bug of ours) to look up a key its table does not list; the
checker reports every key the table does not list. So a key the loader reads is always declared, and
a declared key is never reported.
Evaluator keys are derived from the pydantic config classes the parser validates into.
"""

from __future__ import annotations

import difflib
import functools
import typing
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ..base.key_checks import NOT_YET, SELF_CHECK, DeclaredOnly, unknown_key_problems
from ..base.problems import Problem
from ..models import EvaluatorConfig, aggregator_kind
from .forms4 import SUITE_EXECUTION_KEYS_4X, SUITE_KEYS_4X
from .yaml_lines import LineDict, key_line, line_of

CASE_LIST_KEYS = ("tests", "eval_cases", "evalcases")
"""A suite's case list, in AgentV 2.19's order (`resolveTests`): only the first one written is read."""

DESCRIPTIVE_KEYS = ("description", "metadata")
"""Read by no scorer on purpose: they describe, they never change a verdict."""

GATE_EXECUTION_KEYS = ("rejudge_on_fail",)
"""agentv-gate's own `execution` keys, read in files of either generation: AgentV 2.19 and 4.42 accept them
without a word and ignore them (their `validate` passes such a file), so the same file runs in both, AgentV
judging once. They decide nothing about a file's generation. `rejudge_on_fail` is also an LLM judge's own key
(`LlmJudgeConfig`, so in `EVALUATOR_KEYS`, and in `RUBRICS_TYPE_KEYS`)."""
SUITE_ONLY_EXECUTION_KEYS = ("total_budget_usd", "fail_on_error", "cache", *SUITE_EXECUTION_KEYS_4X,
                             *GATE_EXECUTION_KEYS)
"""They steer the whole suite (stop starting cases, the response cache): a test writing them is an error."""
SUITE_EXECUTION_KEYS = ("evaluators", "threshold", "target", "trials", "targets", *SUITE_ONLY_EXECUTION_KEYS)
TEST_EXECUTION_KEYS = ("evaluators", "threshold", "target", "trials", "targets", "skip_defaults",
                       *SUITE_ONLY_EXECUTION_KEYS)
"""A test's suite-only keys are declared so the case builder can say where they belong (loader/execution_settings.py)."""

WORKSPACE_KEYS = ("hooks", "template", "mode", "isolation", "repos")
REPO_KEYS = ("path", "repo", "commit", "base_commit", "ancestor", "sparse")
HOOK_KEYS = ("command", "timeout_ms", "cwd", "reset")

SEGMENT_KEYS = {"text": ("type", "value"), "file": ("type", "value")}
"""A message's content segments, by type, as AgentV reads them: a file segment's `value` names its file (a
`path` there attaches nothing in AgentV), an input text segment's `value` is its text (AgentV's prompt shows
no `text`). Segments of other types are left as they are: they may be JSON data (an expected output)."""
EXPECTED_SEGMENT_KEYS = {**SEGMENT_KEYS, "text": ("type", "value", "text")}
"""An expected message's segments: AgentV's reference answer reads a text segment's `text`, else its `value`."""

SUITE_METADATA_KEYS = ("version", "author", "tags", "license", "requires")
"""AgentV's eval spec v2 metadata block (beside `name` and `description`): it describes the suite, read by no
scorer there or here; its shapes are AgentV's metadata schema's (loader/suite.py checks them)."""

SUITE_KEYS = (*CASE_LIST_KEYS, *DESCRIPTIVE_KEYS, *SUITE_METADATA_KEYS, "name", "dataset", "threshold", "target",
              "input", "input_files", "assertions", "assert", "evaluators", "evaluator", "execution", "workspace",
              "$schema", "preprocessors", *SUITE_KEYS_4X)
"""`$schema` is AgentV's file-type tag (`agentv-eval-v2`), which its own `validate` asks every eval file for."""

TEST_KEYS = (
    "id", "eval_id", *DESCRIPTIVE_KEYS, "note",
    "input", "input_messages", "question", "input_files",
    "criteria", "expected_outcome", "outcome", "expected_output", "expected_messages", "reference_answer",
    "assertions", "assert", "evaluators", "evaluator", "grader",
    "execution", "threshold", "target", "conversation_id", "rubrics", "workspace", "vars",
    "depends_on", "on_dependency_failure", "mode", "turns", "aggregation", "on_turn_failure", "window_size",
)
"""`note` is a test's free text in AgentV 2.x's eval files, read by no scorer there or here (like `description`);
`vars` fills the test's `{{name}}` placeholders (AgentV 4.x, loader/case_vars.py); `depends_on` and
`on_dependency_failure` order and gate tests (AgentV 4.x, loader/dependencies.py); `mode: conversation` and
its keys make a conversation test (AgentV 4.x, loader/conversation.py)."""

EVALUATOR_ALIASES: dict[str, tuple[str, ...]] = {
    "code_judge": ("command", "timeout"),  # the parser renames them to `script` and `timeout_seconds`
    "composite": ("assert", "assertions"),  # the parser reads them as `evaluators`
}
EVERY_EVALUATOR = ("negate", "min_score", "preprocessors")
"""Read by the orchestrator for every evaluator (AgentV's `negate: true`); `preprocessors` is checked on every
evaluator as AgentV 4.42 checks it, and kept on an llm-grader (loader/preprocessors.py)."""

AGGREGATOR_KEYS_BY_KIND: dict[str, tuple[str, ...]] = {
    "weighted_average": ("type", "weights"),
    "threshold": ("type", "threshold"),
    "code_judge": ("type", "weights", "path", "script", "cwd", "timeout_seconds"),
    "llm_judge": ("type", "weights", "prompt"),
}
"""A composite's `aggregator:` mapping, as the composite evaluator reads it for each kind of aggregator
(a code or LLM aggregator gets each member's weight with its result)."""
AGGREGATOR_KEYS = tuple(dict.fromkeys(key for keys in AGGREGATOR_KEYS_BY_KIND.values() for key in keys))

ONE_SPELLING = (("id", "eval_id"), ("input_messages", "input", "question"), ("criteria", "expected_outcome", "outcome"),
                ("expected_messages", "expected_output"), ("evaluator", "grader"))
"""A test's fields that have several spellings, each in the order the case builder reads them: only the
first one written is read, so a second one is refused where it is written."""

EVALUATOR_LISTS = ("assertions", "assert", "execution.evaluators", "evaluators")
"""Where a suite or a test lists its evaluators, in AgentV's order: AgentV runs only the first one written."""

CODE_JUDGE_RESERVED = ("judge",)
"""Keys AgentV keeps from a code judge's config without agentv-gate reading them: never passed through."""


def _evaluator_keys() -> dict[str, frozenset[str]]:
    """type -> keys, from the fields of each config class (loader-filled fields left out)."""
    union = typing.get_args(typing.get_args(EvaluatorConfig)[0])
    table: dict[str, frozenset[str]] = {}
    for cls in union:
        fields = {name for name, info in cls.model_fields.items() if not info.exclude}
        for kind in typing.get_args(cls.model_fields["type"].annotation):
            table[kind] = frozenset({*fields, *EVERY_EVALUATOR, *EVALUATOR_ALIASES.get(kind, ())})
    return table


EVALUATOR_KEYS = _evaluator_keys()

RUBRICS_TYPE_KEYS = ("name", "type", "criteria", "weight", "required", "negate", "model", "target", "min_score",
                     "preprocessors", *GATE_EXECUTION_KEYS)
"""`type: rubrics` (AgentV's shorthand, read as an llm_judge with a rubric list): its own keys, since
`criteria` is its list here and `prompt`/`rubrics` are refused on it."""


class _Declared(DeclaredOnly, LineDict):
    """An eval-file mapping the loader may only read declared keys of (see the module's docstring)."""

    reader = "the loader"
    table = "loader/eval_file_keys.py"


_KEY_SETS: dict[int, tuple[Collection[str], frozenset[str]]] = {}
"""id of a table of keys -> (the table, kept alive, as a frozenset): each test is read through three."""


def _key_set(keys: Collection[str]) -> frozenset[str]:
    found = _KEY_SETS.get(id(keys))
    if found is not None and found[0] is keys:
        return found[1]
    key_set = frozenset(keys)
    if len(_KEY_SETS) < 64:  # the loader's tables, a handful; never one per call
        _KEY_SETS[id(keys)] = (keys, key_set)
    return key_set


def only_known_keys(raw: dict[Any, Any], known: Collection[str]) -> bool:
    """Whether every key of `raw` is one of `known`: no problem to look for, no message to word."""
    return _key_set(known).issuperset(raw)


def declared(raw: Any, keys: Collection[str]) -> Any:
    """`raw` (a mapping) readable only through `keys`, its lines kept, when the suite's self-check is on
    (`SELF_CHECK`: the tests); anything else, and everything otherwise, unchanged."""
    if not SELF_CHECK or not isinstance(raw, dict):
        return raw
    out = _Declared(raw, _key_set(keys))
    out.line = line_of(raw)
    out.key_lines = getattr(raw, "key_lines", {})
    return out


def key_problems(raw: Any, known: Collection[str], level: str, where: str, file: Path, *,
                 kind: str | None = None, config_passthrough: bool = False) -> list[Problem]:
    """Problems for the keys of `raw` its level does not read, each at its own line.

    `kind` adds that evaluator type's not-yet keys to the level's; `config_passthrough` lets other
    keys through as a code judge's config (AgentV hands them to the script).
    """
    if not isinstance(raw, dict):
        return []
    if only_known_keys(raw, known):
        return []  # the common case, decided at once
    not_yet = {**NOT_YET.get(level, {}), **NOT_YET.get(kind or "", {})}
    found = unknown_key_problems(raw, known, not_yet, where, lambda key: key_line(raw, key, line_of(raw)),
                                 _passes_as_config(known) if config_passthrough else None)
    return [Problem(file, p.line, p.message, unknown_key=p.unknown) for p in found]


def aggregator_key_problems(raw: Any, where: str, file: Path) -> list[Problem]:
    """Problems for the keys of an `aggregator:` that another kind of aggregator reads but this one
    does not (a `path:` on a weighted average runs no script), each at its own line."""
    kind = aggregator_kind(raw) if isinstance(raw, dict) else None
    if kind is None:
        return []  # not a mapping, or an unknown type: reported as such
    problems = []
    for key in raw:
        if key in AGGREGATOR_KEYS and key not in AGGREGATOR_KEYS_BY_KIND[kind]:
            readers = ", ".join(other for other, keys in AGGREGATOR_KEYS_BY_KIND.items() if key in keys)
            problems.append(Problem(file, key_line(raw, key, line_of(raw)),
                                    f"'{key}' in the aggregator of {where}: the {kind} aggregator does not read it "
                                    f"(read by: {readers})", unknown_key=True))
    return problems


def _written(raw: dict[str, Any], path: str) -> tuple[Any, str] | None:
    """(mapping, key) where `path` (`assert`, or `execution.evaluators`) is written in `raw`; None if it is not."""
    holder_key, _, key = path.rpartition(".")
    holder = raw.get(holder_key) if holder_key else raw
    return (holder, key) if isinstance(holder, dict) and key in holder else None


def one_of_problems(raw: Any, where: str, file: Path, *, test: bool) -> list[Problem]:
    """A field written in two of its spellings (`input_messages` and `input`), two lists of evaluators,
    or a test's single `evaluator` beside a list: one of them is never read (or, for a test's lists,
    read by agentv-gate and not by AgentV), so each is refused where it is written."""
    if not isinstance(raw, dict):
        return []
    if not _written_twice(_ONE_OF_KEYS.intersection(raw), test):  # iterating the keys: no declared-key lookup
        return []  # no field written twice, at most one list of evaluators: the common case, decided at once
    problems: list[Problem] = []
    for names in ONE_SPELLING if test else ():
        written = [name for name in names if name in raw]
        problems.extend(Problem(file, key_line(raw, key, line_of(raw)),
                                f"'{key}' in {where} is never read: '{written[0]}' (line {key_line(raw, written[0])}) "
                                f"is written too, and only the first of {', '.join(names)} is read",
                                f"one of {', '.join(names)}") for key in written[1:])
    lists = [(path, found) for path in EVALUATOR_LISTS if (found := _written(raw, path)) is not None]
    if lists:
        first, (holder, key) = lists[0]
        at = key_line(holder, key)
        problems.extend(Problem(file, key_line(other, name, line_of(other)),
                                f"'{path}' in {where}: '{first}' (line {at}) is a list of evaluators too; AgentV runs "
                                f"only the first of {', '.join(EVALUATOR_LISTS)}", "one list of evaluators")
                        for path, (other, name) in lists[1:])
        single = next((name for name in ("evaluator", "grader") if name in raw), None) if test else (
            "evaluator" if "evaluator" in raw else None)
        if single is not None:
            problems.append(Problem(file, key_line(raw, single, line_of(raw)),
                                    f"'{single}' in {where} is never read: a single evaluator is read only without a "
                                    f"list, and '{first}' (line {at}) is one", f"'{first}' alone"))
    return problems


_ONE_OF_GROUPS = (*(frozenset(names) for names in ONE_SPELLING),
                  frozenset({*(path.split(".")[0] for path in EVALUATOR_LISTS), "evaluator", "grader"}))
"""The top-level keys of which two written together may make a problem of `one_of_problems`: each
spelling group, and the evaluator lists with the single evaluator (the last group)."""
_ONE_OF_KEYS = frozenset().union(*_ONE_OF_GROUPS)


@functools.lru_cache(maxsize=1024)  # pragma: no mutate - a suite's tests share a few sets of keys: only speed can change
def _written_twice(present: frozenset[str], test: bool) -> bool:
    """Whether two of `present` (the keys of `_ONE_OF_KEYS` a mapping holds) are in one group."""
    return any(len(present.intersection(group)) > 1 for group in (_ONE_OF_GROUPS if test else _ONE_OF_GROUPS[-1:]))


def _passes_as_config(known: Collection[str]) -> Callable[[str], bool]:
    def passes(key: str) -> bool:
        """A code judge's extra key goes to its script as config, unless AgentV reserves it or it is a
        near miss of one of the judge's own settings (`wieght`), which is likelier a typo than config."""
        if key in CODE_JUDGE_RESERVED:
            return False
        settings = known if isinstance(known, (tuple, frozenset)) else tuple(known)
        return not _near_miss(key, settings)

    return passes


@functools.lru_cache(maxsize=1024)  # pragma: no mutate - every test of a suite asks of the same keys: only speed can change
def _near_miss(key: str, known: tuple[str, ...] | frozenset[str]) -> bool:
    """Whether `key` is close to one of `known` (difflib, 0.8). Asked once per distinct key and table, not once
    a case: a code judge's config key (`keywords`) on every test of a suite was a seventh of reading it."""
    return bool(difflib.get_close_matches(key, list(known), n=1, cutoff=0.8))
