"""Raw evaluator mappings -> validated `EvaluatorConfig`s with scripts and prompts resolved.

Each entry goes through four steps: normalise (the mapping as AgentV reads it: its type's spellings
and its settings' other names, from the tables on each config class in models/config.py), validate
(pydantic, its errors translated by schema_errors.py), check (evaluator_checks.py, keyed by config class)
and resolve (the files it names, `RESOLVERS` below). Every refusal is a located `EvalFileError` naming the
field and what was expected, so `validate` can print `file:line: ...` for each.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..base.generations import Generation, generation_of_type
from ..base.key_checks import NOT_YET_EVALUATOR_TYPES, did_you_mean, not_yet_message
from ..base.problems import Problem, no_effect
from ..errors import EvalFileError, SkippedEvaluator
from ..models import (
    EVALUATOR_CONFIG_CLASSES,
    EVALUATOR_KINDS,
    CodeJudgeConfig,
    CompositeConfig,
    ContainsConfig,
    CustomAssertionConfig,
    EvaluatorConfig,
    LlmJudgeConfig,
    TargetAccessConfig,
    ToolTrajectoryConfig,
    TrajectoryItem,
    config_class,
    merged_preprocessors,
)
from .assertions import CUSTOM_KIND, find_custom_assertion
from .composite_parser import composite
from .eval_file_keys import (
    AGGREGATOR_KEYS,
    EVALUATOR_KEYS,
    GATE_EXECUTION_KEYS,
    RUBRICS_TYPE_KEYS,
    aggregator_key_problems,
    key_problems,
    only_known_keys,
)
from .evaluator_checks import check, check_weight_total
from .evaluator_files import code_judge_files, judge_files, resolve_script
from .evaluator_written import Written
from .forms4 import group_criteria, is_type_name
from .preprocessors import parse_preprocessors, reads_preprocessors
from .refs import SearchRoots
from .rubric_items import parse_rubric_items
from .schema_errors import validation_error, written_value
from .yaml_lines import LineList, item_line, key_line, line_of, yaml_kind

__all__ = ["auto_name", "check_weight_total", "normalise_kind", "parse_evaluator", "parse_evaluators",
           "resolve_script", "written_value"]

@functools.cache
def _adapter() -> TypeAdapter[EvaluatorConfig]:
    """The whole union, for a `type:` no config class has (its error names the kinds): built on first use."""
    return TypeAdapter(EvaluatorConfig)

TYPE_ALIASES: dict[str, str] = {alias: get_args(cls.model_fields["type"].annotation)[0]
                for cls in EVALUATOR_CONFIG_CLASSES for alias in cls.TYPE_ALIASES}
"""Every other spelling of a `type:` -> the kind it names, from the config classes' `TYPE_ALIASES`."""
CONTAINS_VARIANTS = ContainsConfig.VARIANTS
RUBRIC_TYPES = LlmJudgeConfig.RUBRIC_TYPES
BUILT_IN_SPELLINGS = frozenset({*(k for k in EVALUATOR_KINDS if k != CUSTOM_KIND), *CONTAINS_VARIANTS})
"""The `type:`s agentv-gate runs itself; any other names a suite's own assertion script."""
PASSES_CONFIG: tuple[type[Any], ...] = (CodeJudgeConfig, CustomAssertionConfig)
"""Kinds whose keys they do not read reach their script as config (AgentV hands them on), not as unknown keys."""


def _named_by_value(kind: str, value: Any) -> str:
    return f"{kind}-{value}" if isinstance(value, str) and value else kind


def _named_by_count(kind: str, value: Any) -> str:
    return f"{kind}-{len(value)}" if isinstance(value, list) else kind


AUTO_NAMES: dict[str, Callable[[str, Any], str]] = {
    **dict.fromkeys(("contains", "icontains", "starts-with", "ends-with", "equals"), _named_by_value),
    **dict.fromkeys(("contains-any", "contains-all", "icontains-any", "icontains-all"), _named_by_count),
    "regex": lambda kind, value: f"regex-{value[:30]}" if isinstance(value, str) and value else kind,
    **dict.fromkeys(("is-json", "rubrics"), lambda kind, value: kind),
    "skill-trigger": _named_by_value,
}
"""AgentV 2.19's `generateAssertionName`, by the type as written (lower case, `_` as `-`)."""


def auto_name(raw_type: Any, value: Any) -> str | None:
    """The name AgentV 2.19 gives an unnamed assertion (`generateAssertionName`): `contains-Paris`,
    `regex-<first 30 chars>`, `is-json`, `equals-<value>`, `contains-any-<count>`, ...; None for
    a type it does not name. Only a string `value` goes into the name, as AgentV's `asString`."""
    kind = str(raw_type).strip().lower().replace("_", "-")
    namer = AUTO_NAMES.get(kind)
    return namer(kind, value) if namer else None


def normalise_kind(raw: Any) -> str:
    """The kind a `type:` names, compared as AgentV compares it: as written, `-` and `_` alike. Never
    lower-cased or trimmed: `Contains` or ` contains` is no built-in type there (it is looked for as a
    custom assertion type and not found), so reading it as `contains` ran a check AgentV does not run."""
    kind = str(raw).replace("-", "_")
    return TYPE_ALIASES.get(kind, kind)


def parse_evaluators(
    raw_list: Any, roots: SearchRoots, file: Path, problems: list[Problem], *, name_required: bool = True,
    line: int, criteria_strings: bool = False, assertions_key: bool = False, file_generation: Generation = "2.x",
    members: bool = False,
) -> list[EvaluatorConfig]:
    """Each entry validated on its own: one bad evaluator is reported, the others still load.

    `assertions_key`: the list is written under `assertions:`, a key only AgentV 3.0+ reads, so a suite's
    own assertion type listed there is run with AgentV 4.x's payload, whatever the rest of the file says.
    `line`: where the list's key is written, for a value that is not a list (`assert: is-json`): a
    scalar carries no line of its own. Plain strings are AgentV 4.x's criteria (one `rubrics` evaluator,
    loader/forms4.py) in a 4.x file (`criteria_strings`, or `file_generation` 4.x) or when one of them is a
    sentence; otherwise (a 2.x file) a string names an evaluator type (`- is-json`). `file_generation`: the
    AgentV the file is read as, which names the unnamed entries (`auto_name`). `members`: a composite's
    member list, whose unnamed entries both AgentVs skip (`_skipped_unnamed`)."""
    if raw_list is None:
        return []
    if not isinstance(raw_list, list):
        raise EvalFileError(line_of(raw_list, line), "evaluators must be a list", "a YAML list of evaluator mappings")
    # 4.42's grader-parser reads every string of a test's or suite's list as a criterion (`- is-json` too);
    # 2.19, and both in a composite's members, skip an entry that is not a mapping ("Skipping invalid
    # evaluator entry ... (expected object)", "Skipping invalid member evaluator ... (expected object)")
    if members or file_generation == "2.x":
        raw_list = _without_non_mappings(raw_list, file, problems, line, members)
    criteria_strings = criteria_strings or file_generation == "4.x"
    if criteria_strings or any(isinstance(entry, str) and not is_type_name(entry) for entry in raw_list):
        grouped = group_criteria(list(raw_list))
        relined = LineList(grouped)
        relined.line = line_of(raw_list, line)
        strings = [i for i, entry in enumerate(raw_list) if isinstance(entry, str)]
        # each entry keeps its line; the criteria evaluator takes its first string's
        relined.item_lines = [item_line(raw_list, i, relined.line) for i in range(len(raw_list))
                              if not isinstance(raw_list[i], str) or (i == strings[0] and len(grouped) > len(raw_list)
                                                                      - len(strings))]
        raw_list = relined
    configs: list[EvaluatorConfig] = []
    for index, raw in enumerate(raw_list):
        line = item_line(raw_list, index, line_of(raw_list))
        skipped = None if name_required else _skipped_unnamed(raw, file_generation, members)
        if skipped is not None:
            problems.append(Problem(file, line_of(raw, line), skipped, "a 'name:' to run it", severity="warning",
                                    no_effect=not members))
            continue
        try:
            configs.append(parse_evaluator(raw, roots, file, problems, name_required=name_required, index=index, line=line,
                                           four_x=criteria_strings, assertions_key=assertions_key,
                                           file_generation=file_generation))
        except SkippedEvaluator as exc:
            problems.append(Problem(file, exc.line, exc.message, exc.expected, severity="warning", no_effect=True))
        except EvalFileError as exc:
            problems.append(Problem(file, exc.line, exc.message, exc.expected))
    return configs


def _without_non_mappings(raw_list: Any, file: Path, problems: list[Problem], line: int, members: bool) -> Any:
    """The list without the entries AgentV skips for not being mappings (a plain string, a number), each said
    at its line; every entry keeps its line."""
    if all(isinstance(entry, dict) for entry in raw_list):
        return raw_list
    where = "a composite's member list" if members else "an evaluator list read as AgentV 2.19 reads it"
    kept = LineList([entry for entry in raw_list if isinstance(entry, dict)])
    kept.line = line_of(raw_list, line)
    kept.item_lines = [item_line(raw_list, i, kept.line) for i, entry in enumerate(raw_list) if isinstance(entry, dict)]
    for index, entry in enumerate(raw_list):
        if not isinstance(entry, dict):
            at = item_line(raw_list, index, kept.line)
            problems.append(Problem(file, at, f"entry {str(entry)[:60]!r} ({yaml_kind(entry)}) has no effect here: in "
                                              f"{where}, AgentV skips an entry that is not a mapping, so it is not run",
                                    "a mapping such as {type: is-json}", severity="warning", no_effect=True))
    return kept


def _skipped_unnamed(raw: Any, file_generation: Generation, members: bool) -> str | None:
    """Why AgentV skips this entry for want of a name, or None when it runs it. A composite's member without a
    name is skipped by 2.19 and 4.42 alike ("Skipping member evaluator with invalid name/type"); in a 2.x file,
    2.19 names only its assertion types (`generateAssertionName`) and a suite's own types (by the type) and skips
    any other unnamed evaluator (`latency`, `code_judge`, `llm_judge`: "Skipping evaluator with missing name",
    evaluator-parser.ts `parseEvaluatorList`), so the entry checks nothing there."""
    if not isinstance(raw, dict) or not raw.get("type"):
        return None
    kind = str(raw["type"]).replace("_", "-")
    if isinstance(raw.get("name"), str) and raw["name"]:
        return None
    if members:
        return (f"{kind} member of a composite has no name: AgentV skips such a member, so it is not run "
                "(the composite scores its named members only)")
    if file_generation != "2.x" or auto_name(raw["type"], raw.get("value")) is not None \
            or normalise_kind(raw["type"]) not in (*BUILT_IN_SPELLINGS, *RUBRIC_TYPES):
        return None
    return (f"'type: {raw['type']}' has no effect here: the {kind} evaluator has no name, and AgentV 2.19 names only "
            "assertion types (contains, regex, ...) and skips any other unnamed evaluator, so it is not run")


def parse_evaluator(
    raw: Any, roots: SearchRoots, file: Path, problems: list[Problem], *, name_required: bool = True, index: int = 0,
    line: int, four_x: bool = False, assertions_key: bool = False, file_generation: Generation = "2.x",
) -> EvaluatorConfig:
    """`line`: where the entry is written, for one that is not a mapping (a mapping carries its own). `four_x`: the
    file is read with AgentV 4.x's meaning, so a `type: rubrics` is a 4.x grader (its prompt, and its items
    required unless they say otherwise, as 4.42 reads them)."""
    w = _written(raw, roots, file, problems, line_of(raw, line), four_x, assertions_key, file_generation)
    normalise(w, name_required=name_required, index=index)
    try:  # where it is written goes in with what is written (a key of that name is an unknown key, reported)
        data = {**w.data, "source_file": file, "source_line": w.line}
        cls = config_class(data.get("type"))  # the union's member for this type: only its schema is built
        config = _adapter().validate_python(data) if cls is None else cast("EvaluatorConfig", cls.model_validate(data))
    except ValidationError as exc:
        raise validation_error(exc, w.line, f"{w.kind} evaluator '{w.data.get('name')}'") from None
    check(config, w)
    resolved: EvaluatorConfig = RESOLVERS.get(type(config), _as_is)(config, w)
    return resolved


def _written(raw: Any, roots: SearchRoots, file: Path, problems: list[Problem], line: int, four_x: bool,
             assertions_key: bool, file_generation: Generation) -> Written:
    if isinstance(raw, str):
        raw = {"name": normalise_kind(raw), "type": raw}
    if not isinstance(raw, dict):  # 4.42 skips it: "Skipping invalid evaluator entry ... (expected object)"
        raise SkippedEvaluator(line, f"entry {str(raw)[:60]!r} ({yaml_kind(raw)}) has no effect here: AgentV skips "
                               "an evaluator entry that is not a mapping, so it is not run", "a mapping such as "
                               "{type: contains, value: ...}")
    if "type" not in raw or raw["type"] in (None, ""):
        raise EvalFileError(line, "evaluator is missing 'type'", f"one of {', '.join(EVALUATOR_KINDS)}")
    kind = normalise_kind(raw["type"])
    rubric_form = kind in RUBRIC_TYPES
    # a suite's own type has no name of its own to tell its generation: the file's forms, or the list it is in
    own_type = kind not in BUILT_IN_SPELLINGS and (four_x or assertions_key)
    return Written(raw, dict(raw), kind, line, file, roots, problems,
                   lambda members: parse_evaluators(members, roots, file, problems, name_required=False, line=line,
                                                    file_generation=file_generation, members=True),
                   "4.x" if own_type else generation_of_type(raw["type"], file_generation), file_generation,
                   rubric_form)


def normalise(w: Written, *, name_required: bool, index: int) -> None:
    """`w.data` as the config class validates it: the type's spelling read, each setting under its one name,
    and what AgentV reads differently from what is written refused (or said) where it is written."""
    _rubric_forms(w)
    if w.kind in NOT_YET_EVALUATOR_TYPES:
        raise EvalFileError(w.line, not_yet_message(f"type: {w.data['type']}", NOT_YET_EVALUATOR_TYPES[w.kind]))
    if w.kind not in BUILT_IN_SPELLINGS:
        _custom_assertion(w)
    _spelling(w)
    w.data["type"] = w.kind
    _key_problems(w, index)
    if not w.data.get("name"):
        if name_required:
            raise EvalFileError(w.line, f"{w.kind} evaluator is missing 'name'", "a name for the evaluator")
        w.data["name"] = _unnamed(w, index)
    _gates(w)
    _one_name(w)
    _preprocessors(w)
    config_class = w.config_class
    PREPARE.get(config_class, _nothing)(w)
    if config_class in _GENERATIONAL:
        w.data["generation"] = w.generation  # its payload, reply and prompt variables (generations.py)


def _preprocessors(w: Written) -> None:
    """AgentV 4.42 checks every grader's `preprocessors:` (a bad entry skips the test) and keeps them on an
    llm-grader, the one grader that reads them; on any other grader, or an AgentV 2.x judge, they change nothing."""
    if "preprocessors" not in w.data:
        return
    at = key_line(w.raw, "preprocessors", w.line)
    parsed = parse_preprocessors(w.data.pop("preprocessors"), at, w.roots, w.file, w.where)
    if reads_preprocessors(w.config_class, w.generation):
        w.data["preprocessors"] = merged_preprocessors(None, parsed)  # of one type, the last written
        return
    reader = "AgentV 2.19 reads no preprocessors" if w.generation == "2.x" else (
        "only an llm-grader reads the answer's file blocks through them (AgentV 4.42 checks them and keeps them "
        "unused here)")
    w.warn(at, "preprocessors", f"{w.where}: {reader}", "preprocessors on an llm-grader, or none")


def _unnamed(w: Written, index: int) -> str:
    """An unnamed entry's name. AgentV 4.42 (`generateAssertionName`) names an assertion by its value and any
    other grader by its type as written, `_` read as `-` (`llm-grader`, `cost`), a second one alike; 2.19 names
    only assertions (and skips the others), which the gate numbers by position (`llm_judge_2`)."""
    named = auto_name(w.raw["type"], w.raw.get(getattr(w.config_class, "NAMED_BY", "value")))
    if named:
        return named
    if w.file_generation == "4.x":
        return str(w.raw["type"]).replace("_", "-")
    base = "rubrics" if w.rubric_form else w.kind
    return base if index == 0 else f"{base}_{index + 1}"


_GENERATIONAL = frozenset(cls for cls in EVALUATOR_CONFIG_CLASSES if "generation" in cls.model_fields)
"""The config classes whose payload, reply or prompt variables differ by AgentV generation."""


def _rubric_forms(w: Written) -> None:
    """`type: rubrics` + `criteria:` is an llm_judge with a rubric list; an llm_judge's own `rubrics:` are read
    as AgentV reads them (required unless they say otherwise in a 4.x file)."""
    if w.rubric_form:
        w.data = _rubrics_as_llm_judge(w.raw, w.data, w.line, required=w.generation == "4.x")
        w.kind = "llm_judge"
    elif "rubrics" in w.data and "rubrics" in getattr(EVALUATOR_KINDS.get(w.kind), "model_fields", {}):
        w.data["rubrics"] = _judge_rubrics(w.raw, w.data, w.line, required=w.generation == "4.x")


def _custom_assertion(w: Written) -> None:
    """A type agentv-gate does not run itself names a script in `.agentv/assertions/` (never `custom_assertion`
    as written): found, it runs as a code judge; not found, the type is unknown."""
    script = find_custom_assertion(w.data["type"], w.roots, w.line) if w.kind not in EVALUATOR_KINDS else None
    if script is None:
        kinds = [k for k in (*EVALUATOR_KINDS, *CONTAINS_VARIANTS) if k != CUSTOM_KIND]
        raise EvalFileError(key_line(w.raw, "type", w.line), f"unknown evaluator type {w.data['type']!r}"
                            f"{did_you_mean(str(w.data['type']).replace('-', '_'), kinds)}",
                            f"one of {', '.join(k for k in EVALUATOR_KINDS if k != CUSTOM_KIND)}, or a script "
                            f".agentv/assertions/{w.data['type']}.py")
    w.data = {**w.data, "name": w.data.get("name") or str(w.data["type"]), "assertion": str(w.data["type"]),
              "type": CUSTOM_KIND, "resolved_script": script}
    w.kind = CUSTOM_KIND


def _spelling(w: Written) -> None:
    """What AgentV's own assertion type of this spelling reads, and nothing more: the class's `REFUSED`
    settings, the value's shape (`VALUE_READS`), and a variant's settings (`contains-any`: contains, any)."""
    for key, (why, instead) in getattr(EVALUATOR_KINDS.get(w.kind), "REFUSED", {}).items():
        if key in w.data:
            raise EvalFileError(key_line(w.raw, key, w.line), why, instead)
    VALUE_READS.get(w.kind, _nothing)(w)
    if w.kind in CONTAINS_VARIANTS:
        _check_variant_settings(w.raw, w.data, w.kind, w.line)
        w.data = {**CONTAINS_VARIANTS[w.kind], **w.data}
        w.kind = "contains"


def _one_value(w: Written) -> None:
    """AgentV reads `contains`/`icontains` with one text value, skipping the assertion for a list."""
    if isinstance(w.data.get("value"), list):
        icontains = w.kind.startswith("i")
        raise EvalFileError(key_line(w.raw, "value", w.line), f"AgentV's {str(w.data['type']).replace('_', '-')} "
                            "reads one text value and skips a list",
                            f"type: {'i' if icontains else ''}contains-all (or -any) for a list")


def _list_value(w: Written) -> None:
    """AgentV reads `contains-all`/`-any` (and their `i` forms) with a list, skipping the assertion otherwise."""
    value = w.data.get("value")
    if value is not None and not isinstance(value, list):
        raise EvalFileError(key_line(w.raw, "value", w.line), f"AgentV skips type: "
                            f"{str(w.data['type']).replace('_', '-')} when its value is not a list",
                            f"value: [{value}], or type: {'icontains' if 'icontains' in w.kind else 'contains'}")


def _untrimmed(w: Written) -> None:
    """AgentV always trims both sides of an equals: `trim: false` once made an untrimmed comparison here."""
    if w.data.get("trim") is False:
        raise EvalFileError(key_line(w.raw, "trim", w.line), "'trim: false': AgentV always trims both sides of an "
                            "equals (it reads no 'trim'), so an untrimmed comparison is not AgentV's",
                            "no 'trim', or a regex anchored with ^ and $ for an exact untrimmed match")


VALUE_READS: dict[str, Callable[[Written], None]] = {
    "contains": _one_value, "icontains": _one_value, "equals": _untrimmed,
    **dict.fromkeys(("contains_all", "contains_any", "icontains_all", "icontains_any"), _list_value),
}
"""A type as written -> how AgentV's assertion of that spelling reads its settings. AgentV ignores keys it does
not know: `case_sensitive: false` on `contains` stays case-sensitive there, `trim: false` on `equals` is
trimmed. agentv-gate once read those as its own switches, so "Paris" passed `contains: paris` with
`case_sensitive: false` where AgentV fails it; each is refused at its line, naming the type that says it."""


EVALUATOR_ID_UNREAD = ("no AgentV reads an evaluator's 'id' (AgentV 4.42's own examples write it as a label); "
                       "results name the evaluator by its 'name'")



def _key_problems(w: Written, index: int) -> None:
    known = RUBRICS_TYPE_KEYS if w.rubric_form else EVALUATOR_KEYS[w.kind]
    if w.config_class not in NESTED_KEYS and only_known_keys(w.raw, known):
        return  # every key known (the common case): decided before any message is worded
    where = w.where if w.data.get("name") else f"{w.kind} evaluator #{index + 1}"
    if "id" in w.raw and "id" not in known and w.config_class not in PASSES_CONFIG:
        # 2.19 and 4.42 both accept an evaluator's `id` and never read it (a code judge's is config for its script)
        w.problems.append(no_effect(w.file, key_line(w.raw, "id", line_of(w.raw)), "id", f"{where}: {EVALUATOR_ID_UNREAD}",
                                    "'name' to label the evaluator"))
        known = (*known, "id")
    for key in GATE_EXECUTION_KEYS:  # the gate's own re-asking of LLM judges, written on another evaluator
        if key in w.raw and key not in known:
            w.problems.append(no_effect(w.file, key_line(w.raw, key, line_of(w.raw)), key,
                                        f"{where}: only an LLM judge is asked again (a {w.kind} gives the same verdict "
                                        "on the same answer)", "rejudge_on_fail on an llm_judge / llm-grader"))
            known = (*known, key)
    for key, (why, instead) in w.config_class.IGNORED.items():  # read by AgentV and never used: a warning
        if key in w.raw:
            w.problems.append(no_effect(w.file, key_line(w.raw, key, line_of(w.raw)), key, f"{where}: {why}", instead))
            known = (*known, key)
    w.problems.extend(key_problems(w.raw, known, "evaluator", where, w.file, kind=w.kind,
                                   config_passthrough=w.config_class in PASSES_CONFIG))
    for key, (known_keys, kind_problems) in NESTED_KEYS.get(w.config_class, {}).items():
        w.problems.extend(key_problems(w.data.get(key), known_keys, key, f"the {key} of {where}", w.file))
        w.problems.extend(kind_problems(w.data.get(key), where, w.file))


NESTED_KEYS: dict[type[Any], dict[str, tuple[tuple[str, ...], Callable[[Any, str, Path], list[Problem]]]]] = {
    CompositeConfig: {"aggregator": (AGGREGATOR_KEYS, aggregator_key_problems)},
}
"""Config class -> its settings that are mappings with keys of their own: (the keys any of them reads, the
problems of keys another of their kinds reads)."""


def _gates(w: Written) -> None:
    """`min_score`, `required` and `negate`, which every kind has, as AgentV reads them."""
    if "min_score" in w.data:
        _min_score(w.raw, w.data, w.kind, w.line, w.problems, w.file)
    if "required" in w.data:
        _check_required(w.data["required"], key_line(w.raw, "required", w.line), w.where)
    if "negate" in w.data and not isinstance(w.data["negate"], bool):
        # AgentV reads `negate === true` and nothing else: `negate: yes` (text in YAML 1.2) or `1` would
        # leave the assertion as it is, the very answers it was written to fail passing it.
        raise EvalFileError(key_line(w.raw, "negate", w.line), f"{w.where}: negate "
                                                               f"{w.data['negate']!r} is not true or false",
                            "negate: true (the assertion must not hold), or no negate")


@functools.cache  # pragma: no mutate - per class, not per entry: only speed can change
def _nested_renames(kind: str) -> dict[str, dict[str, tuple[str, str]]]:
    """field -> the `RENAMED` table of the model it may hold (an llm_judge's `prompt` mapping)."""
    tables = {name: getattr(arg, "RENAMED", None) for name, info in EVALUATOR_KINDS[kind].model_fields.items()
              for arg in get_args(info.annotation) if isinstance(arg, type) and issubclass(arg, BaseModel)}
    return {name: table for name, table in tables.items() if table}


def _one_name(w: Written) -> None:
    """A setting written under both its names (the class's `RENAMED`): one of them would be dropped unsaid."""
    raw = w.raw
    tables = [(raw, "", w.config_class.RENAMED)]
    nested = _nested_renames(w.kind)
    if nested:  # most kinds hold no model of their own
        tables += [(w.data[key], f"{key}.", renamed) for key, renamed in nested.items()
                   if isinstance(w.data.get(key), dict)]
    for mapping, prefix, renamed in tables:
        for first, (second, note) in renamed.items():
            if first not in mapping or second not in mapping:
                continue
            at = key_line(mapping, first, key_line(raw, prefix.rstrip(".") or first, w.line))
            raise EvalFileError(at, f"{w.where}: '{prefix}{first}' and '{prefix}{second}' are one setting ({note}), "
                                    "written twice: only one would be read",
                                f"either '{prefix}{first}' or '{prefix}{second}'")


def _script_config(w: Written) -> None:
    """AgentV 2.19 hands on every key it does not read itself as the judge's config, `config:` among them:
    a written `config: {a: 1}` reaches the script as config.config.a (flattened here once, a verdict of
    AgentV's own trial-output-consistency example flipped)."""
    if "config" in w.data:
        w.data["config"] = {"config": w.data["config"]}


def _code_judge(w: Written) -> None:
    if w.generation == "2.x":  # a 4.x code-grader's `config:` is merged flat over its other keys (4.42's mergedConfig)
        _script_config(w)
    if not (w.data.get("script") or w.data.get("command")):
        raise EvalFileError(w.line, f"code_judge '{w.data['name']}' has no 'script'",
                            "script: [python3, judge.py] or script: python3 judge.py")
    if "target" in w.data:
        w.data["target"] = _target_access(w.data["target"], getattr(w.raw, "key_lines", {}).get("target", w.line),
                                          w.data["name"])
        if w.data["target"] is None:
            del w.data["target"]


def _trajectory_items(w: Written) -> None:
    """The expected items without the keys AgentV parses past (`TrajectoryItem.IGNORED`), each said where written."""
    items = w.data.get("expected")
    if not isinstance(items, list):
        return
    kept: list[Any] = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and any(key in item for key in TrajectoryItem.IGNORED):
            at = item_line(items, index, w.line)
            for key, (why, instead) in TrajectoryItem.IGNORED.items():
                if key in item:
                    w.warn(key_line(item, key, at), key, f"tool_trajectory '{w.data['name']}': expected[{index}] is "
                           f"compared by its tool, args and max_duration_ms only ({why})", instead)
            item = {key: value for key, value in item.items() if key not in TrajectoryItem.IGNORED}
        kept.append(item)
    w.data["expected"] = kept


def _composite_members(w: Written) -> None:
    """The member list (under any of `MEMBER_LISTS`) kept for after the composite validates; its generation its
    file's (both AgentVs name it `composite`)."""
    w.generation = w.file_generation
    w.members = next((w.data[key] for key in CompositeConfig.MEMBER_LISTS if key in w.data), None)
    for key in CompositeConfig.MEMBER_LISTS:
        w.data.pop(key, None)
    if not isinstance(w.members, list) or not w.members:  # both AgentVs skip it ("missing evaluators (or assert)
        # array", "no valid member evaluators"): it checks nothing
        raise SkippedEvaluator(w.line, f"composite '{w.data['name']}' has no effect here: it has no member evaluators, "
                                       "and AgentV skips such a composite, so it is not run", "a list of child evaluators")
    w.data["evaluators"] = []


def _nothing(w: Written) -> None:
    return None


def _as_is(config: EvaluatorConfig, w: Written) -> EvaluatorConfig:
    return config


PREPARE: dict[type[Any], Callable[[Written], None]] = {
    CodeJudgeConfig: _code_judge, CustomAssertionConfig: _script_config,
    ToolTrajectoryConfig: _trajectory_items, CompositeConfig: _composite_members,
}
"""Config class -> what its entry needs before it validates, beyond the tables on the class."""

RESOLVERS: dict[type[Any], Callable[[Any, Written], Any]] = {
    CodeJudgeConfig: code_judge_files, LlmJudgeConfig: judge_files, CompositeConfig: composite,
}
"""Config class -> a copy of the validated config with the files it names found and read (evaluator_files.py)."""


def _target_access(value: Any, line: int, name: str) -> dict[str, Any] | None:
    """A code judge's `target:` as AgentV writes it: `true` (default limit), `false` (none), or
    `{max_calls: N}`. Anything else is refused here rather than read as no model access."""
    if value is True:
        return {}
    if value is False:
        return None
    if isinstance(value, dict):
        try:
            TargetAccessConfig.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise EvalFileError(line, f"code_judge '{name}': target.{where}: {first['msg']}",
                                "target: {max_calls: N} with N a whole number >= 0") from None
        return dict(value)
    raise EvalFileError(line, f"code_judge '{name}': target must be true or a mapping, got {value!r}",
                        "target: true, or target: {max_calls: 20}")


def _judge_rubrics(raw: Any, data: dict[str, Any], line: int, required: bool) -> list[Any]:
    """An llm_judge's `rubrics:` list; a `prompt` beside it is refused, since the rubric prompt replaces it."""
    if data.get("prompt") is not None:
        raise EvalFileError(key_line(raw, "prompt", line), f"llm_judge '{data.get('name', '')}' has both 'prompt' and "
                                                           "'rubrics'; a rubric judge uses AgentV's rubric prompt",
                            "either 'prompt' or 'rubrics'")
    return list(parse_rubric_items(data["rubrics"], key_line(raw, "rubrics", line), "'rubrics'",
                                   objects_required=required))


def _rubrics_as_llm_judge(raw: Any, data: dict[str, Any], line: int, required: bool) -> dict[str, Any]:
    """`type: rubrics` + `criteria:` -> an llm_judge with `rubrics`, as AgentV makes it."""
    for key in ("rubrics", "prompt"):
        if key in data:
            raise EvalFileError(key_line(raw, key, line), f"'{key}' is not a setting of a `type: {data['type']}` "
                                                          "evaluator; its items go in 'criteria'",
                                "criteria: [...], and optionally name, weight, required, model, target")
    if "criteria" not in data:
        raise EvalFileError(line, f"`type: {data['type']}` evaluator has no 'criteria'", "criteria: [rubric items]")
    out = dict(data)
    out["rubrics"] = parse_rubric_items(out.pop("criteria"), key_line(raw, "criteria", line), "'criteria'",
                                        objects_required=required)
    out["type"] = "llm_judge"
    return out


def _check_variant_settings(raw: Any, data: dict[str, Any], kind: str, line: int) -> None:
    """`icontains` with `case_sensitive: true`, `contains-all` with `any: true`: the type's spelling says one
    thing and the key the other. The key used to win unsaid; which one was meant is a guess, so it is refused."""
    for key, fixed in CONTAINS_VARIANTS[kind].items():
        written = data.get(key)
        if isinstance(written, bool) and written is not fixed:
            wanted = {**CONTAINS_VARIANTS[kind], key: written}
            other = next((name for name, settings in CONTAINS_VARIANTS.items() if settings == wanted), "contains")
            raise EvalFileError(key_line(raw, key, line), f"'{key}: {str(written).lower()}' contradicts `type: "
                                                          f"{data['type']}`, which means {key}: {str(fixed).lower()}",
                                f"type: {other}, or no '{key}'")


def _min_score(raw: Any, data: dict[str, Any], kind: str, line: int, problems: list[Problem], file: Path) -> None:
    """AgentV 4.x's `min_score` (0, 1]: the mark a `required` evaluator must reach, before a numeric `required`.
    4.42 reads it only beside `required` (its gate) and drops a value out of range unsaid; agentv-gate refuses
    that value and says when nothing reads it."""
    at = key_line(raw, "min_score", line)
    mark = data.pop("min_score")
    where = f"{kind} evaluator '{data['name']}'"
    if isinstance(mark, bool) or not isinstance(mark, (int, float)) or not 0 < mark <= 1:
        raise EvalFileError(at, f"{where}: min_score {mark!r} is not a number in (0, 1]",
                            "min_score: 0.7 beside required: true")
    if data.get("required") in (None, False):
        problems.append(Problem(file, at, f"{where}: 'min_score' is read only beside 'required: true' (AgentV's "
                                "required gate); here it changes nothing", "required: true beside it, or no "
                                "'min_score'", severity="warning"))
        return
    data["required"] = float(mark)


def _check_required(value: Any, line: int, where: str) -> None:
    """AgentV's `required`: true (the mark is 0.8), false, or the mark itself, a number in (0, 1]."""
    if isinstance(value, bool) or (isinstance(value, (int, float)) and 0 < value <= 1):
        return
    raise EvalFileError(line, f"{where}: required {value!r} is not true, false or a number in (0, 1]",
                        "required: true (must score 0.8) or a mark such as required: 0.6")
