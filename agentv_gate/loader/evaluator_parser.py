"""Raw evaluator mappings -> validated `EvaluatorConfig`s with scripts and prompts resolved.

Validation errors are raised as located `EvalFileError`s naming the field and what was
expected, so `validate` can print `file:line: ...` for each.
"""

from __future__ import annotations

import functools
import math
import os
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .. import models
from ..defaults import MAX_DURATION_MS
from ..errors import EvalFileError
from ..generations import generation_of_type
from ..javascript import compile_js_regex, is_finite_number
from ..keys import NOT_YET_EVALUATOR_TYPES, did_you_mean, not_yet_message
from ..models import (
    ABSENT,
    EVALUATOR_KINDS,
    CodeJudgeConfig,
    CompositeConfig,
    CustomAssertionConfig,
    EvaluatorConfig,
    ExecutionMetricsConfig,
    FieldAccuracyConfig,
    LlmJudgeConfig,
    PromptScriptConfig,
    RegexConfig,
    TargetAccessConfig,
    TokenUsageConfig,
    ToolTrajectoryConfig,
    aggregator_kind,
    value_at_path,
)
from .assertions import CUSTOM_KIND, find_custom_assertion
from .forms4 import group_criteria, is_type_name
from .keys import AGGREGATOR_KEYS, EVALUATOR_KEYS, RUBRICS_TYPE_KEYS, aggregator_key_problems, key_problems
from .problems import Problem, no_effect
from .refs import SearchRoots
from .rubrics import parse_rubric_items
from .yaml_lines import LineList, item_line, key_line, line_of, yaml_kind

_ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)

TYPE_ALIASES = {
    "code": "code_judge",
    "code_grader": "code_judge",
    "llm_grader": "llm_judge",
    "code_evaluator": "code_judge",
    "script": "code_judge",
    "llm": "llm_judge",
    "llm_evaluator": "llm_judge",
    "judge": "llm_judge",
    "json": "is_json",
    "is_valid_json": "is_json",
    "match": "regex",
    "equal": "equals",
    "exact_match": "equals",
}

# AgentV 3+ assertion names that are `contains` with settings.
CONTAINS_VARIANTS: dict[str, dict[str, bool]] = {
    "contains_all": {"any": False},
    "contains_any": {"any": True},
    "icontains": {"case_sensitive": False},
    "icontains_all": {"case_sensitive": False},
    "icontains_any": {"case_sensitive": False, "any": True},
}

PROMPT_FILE_SUFFIXES = {".md", ".txt", ".prompt", ".markdown", ".j2", ".tmpl"}
EXECUTABLE_PROMPT_RUNTIMES = {".py": ["python3"], ".js": ["node"], ".mjs": ["node"], ".ts": ["bun", "run"]}
SCRIPT_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".bash"}


def auto_name(raw_type: Any, value: Any) -> str | None:
    """The name AgentV 2.19 gives an unnamed assertion (`generateAssertionName`): `contains-Paris`,
    `regex-<first 30 chars>`, `is-json`, `equals-<value>`, `contains-any-<count>`, ...; None for
    a type it does not name. Only a string `value` goes into the name, as AgentV's `asString`."""
    kind = str(raw_type).strip().lower().replace("_", "-")
    text = value if isinstance(value, str) and value else None
    if kind in ("contains", "icontains", "starts-with", "ends-with", "equals"):
        return f"{kind}-{text}" if text else kind
    if kind in ("contains-any", "contains-all", "icontains-any", "icontains-all"):
        return f"{kind}-{len(value)}" if isinstance(value, list) else kind
    if kind == "regex":
        return f"regex-{text[:30]}" if text else kind
    if kind in ("is-json", "rubrics"):
        return kind
    return None


RUBRIC_TYPES = ("rubrics", "rubric")
"""AgentV's `type: rubrics` (with `criteria:`): an llm_judge with a rubric list."""


def normalise_kind(raw: Any) -> str:
    """The kind a `type:` names, compared as AgentV compares it: as written, `-` and `_` alike. Never
    lower-cased or trimmed: `Contains` or ` contains` is no built-in type there (it is looked for as a
    custom assertion type and not found), so reading it as `contains` ran a check AgentV does not run."""
    kind = str(raw).replace("-", "_")
    return TYPE_ALIASES.get(kind, kind)


@functools.lru_cache(maxsize=256)  # pragma: no mutate - a cache of PATH lookups: only speed can change
def _on_path(command: str, search_path: str) -> bool:
    """Whether `command` is found on `search_path`; asked once per command, not once per case."""
    return shutil.which(command, path=search_path) is not None


def _looks_like_path(token: str) -> bool:
    return "/" in token or Path(token).suffix.lower() in SCRIPT_SUFFIXES


def resolve_script(
    script: Any, line: int, roots: SearchRoots, cwd: Path | None, problems: list[Problem], file: Path
) -> list[str]:
    """argv with every path-like token made absolute; a missing script file is an error.

    A string is shell-split (never run through a shell). Tokens that name an existing file are
    resolved from `cwd` (or the eval folder), then the repo root; a token that looks like a script
    path but exists nowhere is reported, since the judge could never run. The command word itself
    is no exception: only a bare name (no `/`) falls back to a PATH lookup.
    """
    if isinstance(script, str):
        try:
            argv = shlex.split(script)
        except ValueError as exc:
            raise EvalFileError(line, f"script cannot be split into arguments: {exc}", "a command line") from None
    elif isinstance(script, list) and all(isinstance(t, (str, int, float)) for t in script):
        argv = [str(t) for t in script]
    else:
        raise EvalFileError(line, f"script must be a string or a list of strings, got {_script_kind(script)}",
                            "script: [python3, judge.py] or script: python3 judge.py")
    if not argv:
        raise EvalFileError(line, "script is empty", "a command to run")
    out: list[str] = []
    for index, token in enumerate(argv):
        if token.startswith("-") or not _looks_like_path(token):
            out.append(token)
            continue
        try:
            resolved = roots.resolve(token, line, "script file", base=cwd)
        except EvalFileError as exc:
            # A bare command name (`tool.py` installed on PATH) may still be looked up there; a word
            # with a `/` is a path, and a path obeys the repository rule like every other reference.
            if index == 0 and "/" not in token and "outside" not in exc.message and shutil.which(token):
                out.append(token)
                continue
            raise
        out.append(str(resolved))
        if index == 0 and not os.access(resolved, os.X_OK):
            raise EvalFileError(line, f"script file {token!r} is not executable",
                                f"chmod +x {token}, or name an interpreter first: [python3, {token}]")
    if not _looks_like_path(argv[0]) and not _on_path(argv[0], os.environ.get("PATH", "")):
        problems.append(Problem(file, line, f"command {argv[0]!r} is not on PATH here", severity="warning"))
    return out


def _script_kind(script: Any) -> str:
    """`[[python3], x.py]` is "a list with a list in it": the list is not what is wrong."""
    if isinstance(script, list):
        odd = next((t for t in script if not isinstance(t, (str, int, float))), None)
        return f"a list with {yaml_kind(odd)} in it"
    return yaml_kind(script)


def parse_evaluators(
    raw_list: Any, roots: SearchRoots, file: Path, problems: list[Problem], *, name_required: bool = True,
    line: int, criteria_strings: bool = False,
) -> list[EvaluatorConfig]:
    """Each entry validated on its own: one bad evaluator is reported, the others still load.

    `line`: where the list's key is written, for a value that is not a list (`assert: is-json`): a
    scalar carries no line of its own. Plain strings are AgentV 4.x's criteria (one `rubrics` evaluator,
    loader/forms4.py) in a 4.x file (`criteria_strings`) or when one of them is a sentence; otherwise a
    string names an evaluator type (`- is-json`)."""
    if raw_list is None:
        return []
    if not isinstance(raw_list, list):
        raise EvalFileError(line_of(raw_list, line), "evaluators must be a list", "a YAML list of evaluator mappings")
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
        try:
            configs.append(parse_evaluator(raw, roots, file, problems, name_required=name_required, index=index, line=line,
                                           four_x=criteria_strings))
        except EvalFileError as exc:
            problems.append(Problem(file, exc.line, exc.message, exc.expected))
    return configs


_MODEL_NAMES = frozenset(name for name, value in vars(models).items()
                         if isinstance(value, type) and issubclass(value, BaseModel))


def _is_union_branch(part: object) -> bool:
    """pydantic names the member of a union it tried in the error's path (`prompt.str`,
    `prompt.PromptScriptConfig.args`): our type names, not a key the user wrote."""
    return isinstance(part, str) and (part in ("str", "int", "float", "bool", "none") or "[" in part
                                      or part in _MODEL_NAMES)


def _user_path(loc: tuple[Any, ...]) -> list[str]:
    """The keys and positions the user wrote, without the evaluator kind and union members pydantic adds."""
    return [str(p) for p in loc if str(p) not in EVALUATOR_KINDS and not _is_union_branch(p)]


def _most_telling(errors: list[Any]) -> Any:
    """For a value that fit no member of a union, pydantic reports every member's complaint, the
    first usually "should be a valid string" about a mapping. A key the user wrote that is not
    allowed says most; else the complaint that went deepest into what the user wrote (`script.1`,
    the list's second item, rather than `script` as a whole)."""
    extra = next((e for e in errors if e["type"] == "extra_forbidden"), None)
    return extra if extra is not None else max(errors, key=lambda e: len(_user_path(e["loc"])))


def _pydantic_message(exc: ValidationError) -> tuple[str, str | None]:
    first = _most_telling(exc.errors())
    where = ".".join(_user_path(first["loc"]))
    if first["type"] == "extra_forbidden":
        return f"unknown key '{where}'", None
    msg = first["msg"]
    if first["type"] == "missing":
        return f"missing required field '{where}'", f"'{where}' to be set"
    return f"field '{where}': {msg}{written_value(first)}", None


def written_value(error: Any) -> str:
    """`, got '2'` for a scalar the file holds where another type belongs (`weight: "2"`): the message says
    what came, not only what was expected. Nothing for a mapping or list, whose repr says little."""
    value = error.get("input")
    if isinstance(value, bool):
        return f", got {str(value).lower()}"
    if isinstance(value, (str, int, float)) and len(repr(value)) <= 80:
        return f", got {value!r}"
    return ""


def check_weight_total(weights: list[Any], line: int, what: str) -> None:
    """Weights each finite can still add up past the largest float (three of 1e308): the weighted
    mean is then inf / inf, NaN, and a NaN score clamped into [0, 1] reads as 1.0, a wrong pass."""
    total = 0.0
    for weight in weights:
        try:  # as the evaluators read them: float(), so YAML's "1e308" (a string to YAML 1.1) counts
            total += float(weight)
        except (TypeError, ValueError, OverflowError):
            continue  # not a number at all: refused where the weight itself is checked
    if not math.isfinite(total):
        raise EvalFileError(line, f"{what} add up to more than the largest number a score is computed with",
                            "weights of a usual size, such as 1, 2 or 0.5")


def _check_numbers(config: EvaluatorConfig, kind: str, line: int) -> None:
    """Numbers that would make a wrong verdict, refused where they are written: a NaN weight makes the
    case's score NaN (a fail that reads like nothing), a negative one lets a failing evaluator raise
    the score, an infinite timeout never ends. A regex that cannot compile is refused here too, so
    `validate` says so instead of every case erroring at run time."""
    label = f"{kind} evaluator '{config.name}'"
    weights = [("weight", config.weight)]
    if isinstance(config, FieldAccuracyConfig):
        weights += [(f"fields[{i}].weight", spec.weight) for i, spec in enumerate(config.fields)]
    for key, weight in weights:
        if not math.isfinite(weight) or weight < 0:
            raise EvalFileError(line, f"{label}: {key} {weight} is not a finite number >= 0", "a weight such as 1 or 0.5")
    if isinstance(config, FieldAccuracyConfig):
        check_weight_total([spec.weight for spec in config.fields], line, f"{label}: the weights of its fields")
    timeouts: list[tuple[str, Any]] = []
    if isinstance(config, (CodeJudgeConfig, CustomAssertionConfig)):
        timeouts.append(("timeout_seconds", config.timeout_seconds))
    if isinstance(config, LlmJudgeConfig) and isinstance(config.prompt, PromptScriptConfig):
        timeouts.append(("prompt.timeout_seconds", config.prompt.timeout_seconds))
    if isinstance(config, CompositeConfig) and aggregator_kind(config.aggregator) == "code_judge":
        # read as `timeout_seconds or the default`: a 0 would quietly become 120 s, text an error per case
        timeouts.append(("aggregator.timeout_seconds", (config.aggregator or {}).get("timeout_seconds")))
    for key, seconds in timeouts:
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not math.isfinite(seconds) or seconds <= 0):
            raise EvalFileError(line, f"{label}: {key} {seconds!r} is not a finite number > 0",
                                "a number of seconds such as 30")
        if seconds is not None and seconds > MAX_DURATION_MS / 1000:
            raise EvalFileError(line, f"{label}: {key} {seconds!r} is longer than any run waits",
                                f"at most {MAX_DURATION_MS / 1000:.3f} seconds")
    if isinstance(config, RegexConfig):
        try:
            compile_js_regex(config.value, config.flags)
        except ValueError as exc:
            raise EvalFileError(line, f"{label}: {exc}", "a pattern that compiles") from None


EVALUATOR_ID_UNREAD = ("no AgentV reads an evaluator's 'id' (AgentV 4.42's own examples write it as a label); "
                       "results name the evaluator by its 'name'")


def _with_unread_id(raw: dict[str, Any], known: Any, kind: str, where: str, file: Path,
                    problems: list[Problem]) -> Any:
    """`known` plus an evaluator's `id`, said to have no effect: 2.19 and 4.42 both accept and never read it (a
    code judge's is config, handed to its script, as in AgentV)."""
    if "id" not in raw or "id" in known or kind in ("code_judge", CUSTOM_KIND):
        return known
    problems.append(no_effect(file, key_line(raw, "id", line_of(raw)), "id", f"{where}: {EVALUATOR_ID_UNREAD}",
                              "'name' to label the evaluator"))
    return (*known, "id")


def parse_evaluator(
    raw: Any, roots: SearchRoots, file: Path, problems: list[Problem], *, name_required: bool = True, index: int = 0,
    line: int, four_x: bool = False,
) -> EvaluatorConfig:
    """`line`: where the entry is written, for one that is not a mapping (a mapping carries its own). `four_x`: the
    file is read with AgentV 4.x's meaning, so a `type: rubrics` is a 4.x grader (its prompt, and its items
    required unless they say otherwise, as 4.42 reads them)."""
    line = line_of(raw, line)
    if isinstance(raw, str):
        raw = {"name": normalise_kind(raw), "type": raw}
    if not isinstance(raw, dict):
        raise EvalFileError(line, f"evaluator must be a mapping, got {yaml_kind(raw)}", "name: ..., type: ...")
    data = dict(raw)
    if "type" not in data or data["type"] in (None, ""):
        raise EvalFileError(line, "evaluator is missing 'type'", f"one of {', '.join(EVALUATOR_KINDS)}")
    kind = normalise_kind(data["type"])
    generation = "4.x" if four_x and kind in RUBRIC_TYPES else generation_of_type(data["type"])
    default_name = "rubrics" if kind in RUBRIC_TYPES else None
    if kind in RUBRIC_TYPES:
        data = _rubrics_as_llm_judge(raw, data, line, required=generation == "4.x")
        kind = "llm_judge"
    elif kind == "llm_judge" and "rubrics" in data:
        data["rubrics"] = _judge_rubrics(raw, data, line, required=generation == "4.x")
    if kind in NOT_YET_EVALUATOR_TYPES:
        raise EvalFileError(line, not_yet_message(f"type: {data['type']}", NOT_YET_EVALUATOR_TYPES[kind]))
    if kind == CUSTOM_KIND or (kind not in EVALUATOR_KINDS and kind not in CONTAINS_VARIANTS):
        script = find_custom_assertion(data["type"], roots, line) if kind != CUSTOM_KIND else None
        if script is None:
            kinds = [k for k in (*EVALUATOR_KINDS, *CONTAINS_VARIANTS) if k != CUSTOM_KIND]
            raise EvalFileError(key_line(raw, "type", line), f"unknown evaluator type {data['type']!r}"
                                f"{did_you_mean(str(data['type']).replace('-', '_'), kinds)}",
                                f"one of {', '.join(k for k in EVALUATOR_KINDS if k != CUSTOM_KIND)}, or a script "
                                f".agentv/assertions/{data['type']}.py")
        data = {**data, "name": data.get("name") or str(data["type"]), "assertion": str(data["type"]),
                "type": CUSTOM_KIND, "resolved_script": script}
        kind = CUSTOM_KIND
    if kind in ("contains", "equals") or kind in CONTAINS_VARIANTS:
        _check_agentv_reads(raw, data, kind, line)
    if kind in CONTAINS_VARIANTS:
        _check_variant_settings(raw, data, kind, line)
        data = {**CONTAINS_VARIANTS[kind], **data}
        kind = "contains"
    data["type"] = kind
    where = f"{kind} evaluator '{data['name']}'" if data.get("name") else f"{kind} evaluator #{index + 1}"
    known = RUBRICS_TYPE_KEYS if default_name == "rubrics" else EVALUATOR_KEYS[kind]
    known = _with_unread_id(raw, known, kind, where, file, problems)
    problems.extend(key_problems(raw, known, "evaluator", where, file, kind=kind,
                                 config_passthrough=kind in ("code_judge", CUSTOM_KIND)))
    if kind == "composite":
        problems.extend(key_problems(data.get("aggregator"), AGGREGATOR_KEYS, "aggregator",
                                     f"the aggregator of {where}", file))
        problems.extend(aggregator_key_problems(data.get("aggregator"), where, file))
    if not data.get("name"):
        if name_required:
            raise EvalFileError(line, f"{kind} evaluator is missing 'name'", "a name for the evaluator")
        base = default_name or kind
        data["name"] = auto_name(raw["type"], raw.get("value")) or (base if index == 0 else f"{base}_{index + 1}")
    if "min_score" in data:
        _min_score(raw, data, kind, line, problems, file)
    if "required" in data:
        _check_required(data["required"], key_line(raw, "required", line), f"{kind} evaluator '{data['name']}'")
    if "negate" in data and not isinstance(data["negate"], bool):
        # AgentV reads `negate === true` and nothing else: `negate: yes` (text in YAML 1.2) or `1` would
        # leave the assertion as it is, the very answers it was written to fail passing it.
        raise EvalFileError(key_line(raw, "negate", line), f"{kind} evaluator '{data['name']}': negate "
                                                           f"{data['negate']!r} is not true or false",
                            "negate: true (the assertion must not hold), or no negate")
    _check_one_name(raw, data, kind, line)
    if kind in ("code_judge", CUSTOM_KIND) and "config" in data:
        # AgentV 2.19 hands on every key it does not read itself as the judge's config, `config:` among them:
        # a written `config: {a: 1}` reaches the script as config.config.a (flattened here once, a verdict of
        # AgentV's own trial-output-consistency example flipped).
        data["config"] = {"config": data["config"]}
    if kind == "code_judge" and not data.get("script") and data.get("command"):
        data["script"] = data.pop("command")  # gen3 name
    if kind == "code_judge" and not data.get("script"):
        raise EvalFileError(line, f"code_judge '{data['name']}' has no 'script'",
                            "script: [python3, judge.py] or script: python3 judge.py")
    if kind == "code_judge" and "target" in data:
        data["target"] = _target_access(data["target"], getattr(raw, "key_lines", {}).get("target", line), data["name"])
        if data["target"] is None:
            del data["target"]
    prompt = data.get("prompt")
    if kind == "llm_judge" and isinstance(prompt, dict) and "command" in prompt:
        # AgentV 2.19 names an executable prompt template's argv `command`; `script` is the older name.
        data["prompt"] = {**{k: v for k, v in prompt.items() if k != "command"}, "script": prompt["command"]}
    if "timeout" in data and "timeout_seconds" not in data:
        data["timeout_seconds"] = data.pop("timeout")
    if kind == "tool_trajectory" and isinstance(data.get("expected"), list):
        data["expected"] = _unread_item_keys(data["expected"], line, data["name"], file, problems)
    if kind == "composite":
        children = data.get("assertions", data.get("evaluators", data.get("assert")))  # `assertions`: 4.x
        data.pop("assert", None)
        data.pop("assertions", None)
        if not isinstance(children, list) or not children:
            raise EvalFileError(line, f"composite '{data['name']}' has no 'evaluators'", "a list of child evaluators")
        data["evaluators"] = []
    if kind in ("code_judge", "llm_judge"):
        data["generation"] = generation  # its payload, reply and prompt variables (generations.py)
    try:
        config = _ADAPTER.validate_python(data)
    except ValidationError as exc:
        message, expected = _pydantic_message(exc)
        raise EvalFileError(line, f"{kind} evaluator '{data.get('name')}': {message}", expected) from None
    config.source_file = file
    config.source_line = line
    _check_numbers(config, kind, line)
    _check_settings(config, raw, line,
                    lambda at, key, why, instead: problems.append(no_effect(file, at, key, why, instead)))
    if isinstance(config, CodeJudgeConfig):
        cwd = _resolve_cwd(config.cwd, roots, key_line(raw, "cwd", line))
        config.resolved_cwd = cwd
        # At the `script:` key (or `command:`), not the evaluator's `- name:` line above it.
        script_line = key_line(raw, "script", key_line(raw, "command", line))
        config.resolved_script = resolve_script(config.script, script_line, roots, cwd, problems, file)
    elif isinstance(config, LlmJudgeConfig):
        _resolve_prompt(config, roots, key_line(raw, "prompt", line), problems, file)
        _check_judge_config(config, raw, line)
    elif isinstance(config, CompositeConfig):
        config.evaluators = parse_evaluators(children, roots, file, problems, name_required=False, line=line)
        named = (config.aggregator or {}).get("weights")
        named = named if isinstance(named, dict) else {}
        weights_at = key_line(raw.get("aggregator"), "weights", line)
        for member, weight in named.items():
            at = key_line((config.aggregator or {}).get("weights"), member, weights_at)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                # AgentV keeps only weights that are numbers (`typeof`): "3" or true was read here as 3 or 1
                raise EvalFileError(at, f"composite evaluator '{config.name}': aggregator weight "
                                        f"{str(weight).lower() if isinstance(weight, bool) else repr(weight)} for "
                                        f"member '{member}' is not a number", "a weight such as 1 or 0.5, unquoted")
            if not is_finite_number(weight) or weight < 0:  # an int past a double's range is Infinity
                raise EvalFileError(line, f"composite evaluator '{config.name}': aggregator weight {weight} for member "
                                          f"'{member}' is not a finite number >= 0", "a weight such as 1 or 0.5")
        check_weight_total([named.get(m.name, 1.0) for m in config.evaluators], line,
                           f"composite evaluator '{config.name}': the weights of its members")
        members = [m.name for m in config.evaluators]
        stray = next((str(k) for k in named if k not in members), None)
        # with a member dropped (reported on its own), a weight for it is not stray
        if stray is not None and isinstance(children, list) and len(members) == len(children):
            weights_raw = raw["aggregator"].get("weights")
            raise EvalFileError(key_line(weights_raw, stray, key_line(raw.get("aggregator"), "weights", line)),
                                f"composite '{config.name}': aggregator weights name '{stray}', which is none of its "
                                f"members ({', '.join(members)}), so that weight is never read",
                                "a member's name (an unnamed member is named as AgentV names it: is-json, contains-x)")
        for member in config.evaluators:
            if member.required_mark is not None:
                problems.append(Problem(file, member.source_line or line,
                                        f"'required' on composite member '{member.name}': required gates apply "
                                        "to a test's own evaluators, not to a composite's members",
                                        "'required' on the composite itself"))
            if "weight" in member.model_fields_set:
                unread = _unread_member_weight(member.name, aggregator_kind(config.aggregator), named)
                problems.append(Problem(file, member.source_line or line,
                                        f"'weight' on composite member '{member.name}': {unread[0]}", unread[1]))
            if (member.model_extra or {}).get("negate") is True:
                problems.append(Problem(file, member.source_line or line,
                                        f"'negate' on composite member '{member.name}': negate applies to a test's "
                                        "own evaluators; the composite scores its members as they are",
                                        "'negate' on the composite itself, or a member that checks the opposite"))
        aggregator = config.aggregator or {}
        aggregating = aggregator_kind(aggregator)
        if aggregating is None:  # found here, not as every case's error once the run is paid for
            raise EvalFileError(key_line(raw.get("aggregator"), "type", key_line(raw, "aggregator", line)),
                                f"composite '{config.name}': unknown aggregator type {aggregator.get('type')!r}",
                                "weighted_average, threshold, code_judge or llm_judge")
        if aggregating == "llm_judge":
            aggregator = config.aggregator = _aggregator_prompt_file(aggregator, roots, raw, line)
        _check_aggregator_settings(config.name, aggregating, aggregator, raw, line)
        script = aggregator.get("path", aggregator.get("script"))
        if aggregating == "code_judge" and isinstance(script, (str, list)) and script:
            # Found, checked and kept inside the repository root exactly as a code_judge's own script.
            aggregator_line = key_line(raw, "aggregator", line)
            cwd = _resolve_cwd(aggregator.get("cwd"), roots, key_line(raw.get("aggregator"), "cwd", aggregator_line))
            config.resolved_aggregator_cwd = cwd
            script_line = key_line(raw.get("aggregator"), "path" if "path" in aggregator else "script", aggregator_line)
            config.resolved_aggregator_script = resolve_script(script, script_line, roots, cwd, problems, file)
    return config


AGGREGATOR_RESULTS_VARIABLE = "{{EVALUATOR_RESULTS_JSON}}"
"""Where an LLM aggregator's prompt gets the members' results (replaced as written, as AgentV does)."""


def _aggregator_prompt_file(aggregator: dict[str, Any], roots: SearchRoots, raw: Any, line: int) -> dict[str, Any]:
    """An LLM aggregator whose `prompt` names a file gets that file's text. AgentV 2.19 resolves the file
    (`promptPath`) and then sends the path itself as the prompt, so its judge never sees the members'
    results; the author evidently meant the file, which is read here (a deliberate difference, in the
    README). Text that names no file stays the prompt."""
    prompt = aggregator.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or "\n" in prompt.strip() or AGGREGATOR_RESULTS_VARIABLE in prompt:
        return aggregator
    at = key_line(raw.get("aggregator"), "prompt", line)
    named = prompt.strip().startswith(PROMPT_FILE_PREFIX)  # 4.x's explicit file: it must exist, as in 4.42
    try:
        path = roots.resolve(prompt.strip().removeprefix(PROMPT_FILE_PREFIX), at, "aggregator prompt file")
    except EvalFileError as exc:
        if named or "outside the repository root" in exc.message:
            raise
        return aggregator
    try:
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalFileError(at, f"aggregator prompt file {prompt!r} cannot be read: {exc}", "a UTF-8 file") from None
    return {**aggregator, "prompt": text}


def _check_aggregator_settings(name: str, aggregating: str, aggregator: dict[str, Any], raw: Any, line: int) -> None:
    """A threshold the composite can only refuse once the run is paid for, and an LLM aggregator prompt that
    never shows the judge what it aggregates (text without the results, or not text, silently the default)."""
    at = key_line(raw.get("aggregator"), "type", key_line(raw, "aggregator", line))
    if aggregating == "threshold" and "threshold" in aggregator:
        threshold = aggregator["threshold"]
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise EvalFileError(key_line(raw.get("aggregator"), "threshold", at),
                                f"composite '{name}': aggregator threshold {threshold!r} is not a number from 0 to 1",
                                "the share of members that must pass, such as 0.5")
    if aggregating == "llm_judge" and aggregator.get("prompt") is not None:
        prompt = aggregator["prompt"]
        at = key_line(raw.get("aggregator"), "prompt", at)
        if not isinstance(prompt, str):
            raise EvalFileError(at, f"composite '{name}': the aggregator prompt must be text, got {yaml_kind(prompt)}",
                                f"prompt text holding {AGGREGATOR_RESULTS_VARIABLE}, or no prompt (the default)")
        if AGGREGATOR_RESULTS_VARIABLE not in prompt:
            raise EvalFileError(at, f"composite '{name}': the aggregator prompt has no {AGGREGATOR_RESULTS_VARIABLE}, "
                                    "so the judge never sees the members' results (a file path is not read here)",
                                f"{AGGREGATOR_RESULTS_VARIABLE} in the prompt text, or no prompt (the default)")


def _unread_member_weight(member: str, aggregating: str | None, named: dict[Any, Any]) -> tuple[str, str]:
    """Why a composite member's own `weight` is never read, and what to write instead.

    AgentV weighs a member by `aggregator.weights[name]`, else 1.0 (runWeightedAverage), under every
    aggregator: a member's own weight is parsed and dropped, so reading it would score the composite
    as AgentV does not (a passing member with `weight: 3` beside a failing one: 0.75, not 0.5)."""
    if aggregating == "threshold":
        return ("the threshold aggregator counts the members that pass, it reads no weight",
                "no weight on the member, or aggregator type weighted_average")
    if member in named:
        return (f"the aggregator's weights give it {named[member]}, so this weight is never read",
                "one weight for the member: in the aggregator's weights or on the member")
    return ("AgentV weighs a member by the aggregator's weights (1 when they do not name it), never by its "
            "own weight, so this weight is never read", f"aggregator: {{weights: {{{member}: ...}}}} on the composite")


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


def _resolve_cwd(cwd: str | None, roots: SearchRoots, line: int) -> Path | None:
    if not cwd:
        return None
    try:
        folder = (roots.eval_dir / cwd).resolve()
        is_dir = folder.is_dir()
    except (OSError, ValueError, RuntimeError) as exc:  # name too long, NUL byte, symlink loop
        raise EvalFileError(line, f"cwd {cwd!r} is not a usable path: {exc}", "an existing folder") from None
    if not is_dir:
        raise EvalFileError(line, f"cwd {cwd!r} is not a folder ({folder})", "an existing folder")
    if not roots.allow_outside_root and not roots.inside_root(folder):
        raise EvalFileError(line, f"cwd {cwd!r} resolves outside the repository root ({folder})",
                            f"a folder inside {roots.repo_root} (or run with --allow-outside-root)")
    return folder


PROMPT_FILE_PREFIX = "file://"
"""AgentV 4.x's mark for a prompt read from a file: without it, any string is the prompt's text."""


def _resolve_grader_prompt(config: LlmJudgeConfig, prompt: str, roots: SearchRoots, line: int,
                           problems: list[Problem], file: Path) -> None:
    """A 4.x llm-grader's text prompt as 4.42 reads it: `file://path` is a template file; any other string is
    the text itself, however much it looks like a path (4.42 then grades with it as the criteria: said)."""
    if prompt.startswith(PROMPT_FILE_PREFIX):
        path = roots.resolve(prompt[len(PROMPT_FILE_PREFIX):].strip(), line, "prompt file")
        try:
            config.resolved_prompt_text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalFileError(line, f"prompt file {prompt!r} cannot be read: {exc}", "a UTF-8 text file") from None
        config.resolved_prompt_path = path
        return
    candidate = prompt.strip()
    if "\n" not in candidate and Path(candidate).suffix.lower() in PROMPT_FILE_SUFFIXES | set(EXECUTABLE_PROMPT_RUNTIMES):
        problems.append(Problem(file, line, f"llm-grader '{config.name}': prompt {candidate!r} is read as the prompt's "
                                "text, not as a file: AgentV 4.x reads a file only after file:// (so it grades with "
                                "this text as the criteria)", f"prompt: file://{candidate}", severity="warning"))
    config.resolved_prompt_text = prompt


def _resolve_prompt(config: LlmJudgeConfig, roots: SearchRoots, line: int, problems: list[Problem], file: Path) -> None:
    prompt = config.prompt
    if prompt is None:
        return
    if not isinstance(prompt, str):
        config.resolved_prompt_script = resolve_script(prompt.script, line, roots, None, problems, file)
        return
    if config.generation == "4.x":
        _resolve_grader_prompt(config, prompt, roots, line, problems, file)
        return
    candidate = prompt.strip()
    suffix = Path(candidate).suffix.lower() if "\n" not in candidate and len(candidate) < 1024 else ""
    if suffix in EXECUTABLE_PROMPT_RUNTIMES:
        path = roots.resolve(candidate, line, "prompt template")
        config.resolved_prompt_script = [*EXECUTABLE_PROMPT_RUNTIMES[suffix], str(path)]
        config.resolved_prompt_path = path
        return
    if suffix in PROMPT_FILE_SUFFIXES:
        path = roots.resolve(candidate, line, "prompt file")
        config.resolved_prompt_path = path
        try:
            config.resolved_prompt_text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalFileError(line, f"prompt file {candidate!r} cannot be read: {exc}", "a UTF-8 text file") from None
        if not config.resolved_prompt_text.strip():
            raise EvalFileError(line, f"llm_judge evaluator '{config.name}': prompt file {candidate!r} is empty, so "
                                      "the judge would get no prompt", "the prompt text in the file")
        return
    if not candidate:  # `prompt: ${{ PROMPT }}` with the variable unset: an empty user prompt, graded blind
        raise EvalFileError(line, f"llm_judge evaluator '{config.name}': the prompt is empty, so the judge would "
                                  "get no prompt", "prompt text, a prompt file, or no prompt (the default)")
    config.resolved_prompt_text = prompt


_CONFIG_VARIABLE = re.compile(r"\{\{\s*config\s*\}\}")
"""`{{config}}` in a prompt template, spelled as the template renderer reads variables."""


def _check_judge_config(config: LlmJudgeConfig, raw: Any, line: int) -> None:
    """An llm_judge's `config` reaches an executable prompt (in its payload) or a text prompt through
    `{{config}}`; the default prompt and the rubric prompt never show it, nor does a text without it."""
    if config.config is None or config.resolved_prompt_script:
        return
    if config.rubrics:
        why = "a rubric judge sends AgentV's rubric prompt, which does not show it"
    elif config.resolved_prompt_text is None:
        why = "the default prompt does not show it"
    elif _CONFIG_VARIABLE.search(config.resolved_prompt_text):
        return
    else:
        why = "its prompt has no {{config}}"
    raise EvalFileError(key_line(raw, "config", line), f"llm_judge evaluator '{config.name}': 'config' is read by no "
                                                       f"part of this judge: {why}",
                        "{{config}} in the prompt, a prompt script (it gets config in its payload), or no 'config'")


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


SETTING_NAMES = (("command", "script", "code_judge", "command is AgentV 2.19's name"),
                 ("timeout", "timeout_seconds", None, "timeout is AgentV's older name"))
"""Settings with two names (kind None: every kind that has the setting); when both are written, one was dropped."""


def _check_one_name(raw: Any, data: dict[str, Any], kind: str, line: int) -> None:
    where = f"{kind} evaluator '{data['name']}'"
    pairs = [(raw, first, second, "", note) for first, second, only, note in SETTING_NAMES if only in (None, kind)]
    prompt = data.get("prompt")
    if kind == "llm_judge" and isinstance(prompt, dict):
        pairs.append((prompt, "command", "script", "prompt.", "command is AgentV 2.19's name"))
    for mapping, first, second, prefix, note in pairs:
        if first in mapping and second in mapping:
            at = key_line(mapping, first, key_line(raw, prefix.rstrip(".") or first, line))
            raise EvalFileError(at, f"{where}: '{prefix}{first}' and '{prefix}{second}' are one setting ({note}), "
                                    "written twice: only one would be read", f"either '{prefix}{first}' or "
                                                                             f"'{prefix}{second}'")


def _check_agentv_reads(raw: Any, data: dict[str, Any], kind: str, line: int) -> None:
    """What AgentV's own assertion types read, and nothing more. AgentV reads `contains`/`icontains` with one
    text value and `contains-all`/`-any` with a list, skipping the assertion otherwise, and ignores keys it does
    not know: `case_sensitive: false` on `contains` stays case-sensitive there, `trim: false` on `equals` is
    trimmed. agentv-gate once read those as its own switches, so "Paris" passed `contains: paris` with
    `case_sensitive: false` where AgentV fails it; each is refused at its line, naming the type that says it."""
    spelled = str(data["type"]).replace("_", "-")
    value = data.get("value")
    if kind == "equals":
        if data.get("trim") is False:
            raise EvalFileError(key_line(raw, "trim", line), "'trim: false': AgentV always trims both sides of an "
                                "equals (it reads no 'trim'), so an untrimmed comparison is not AgentV's",
                                "no 'trim', or a regex anchored with ^ and $ for an exact untrimmed match")
        return
    if kind in ("contains", "icontains"):
        if kind == "contains":
            for key, instead in (("case_sensitive", "type: icontains"), ("any", "type: contains-any")):
                if key in data:
                    raise EvalFileError(key_line(raw, key, line), f"AgentV's contains reads no '{key}' (it stays "
                                        f"{'case-sensitive' if key == 'case_sensitive' else 'one value'} there)",
                                        f"{instead}, or no '{key}'")
        if isinstance(value, list):
            raise EvalFileError(key_line(raw, "value", line), f"AgentV's {spelled} reads one text value and skips a "
                                "list", f"type: {'i' if kind == 'icontains' else ''}contains-all (or -any) for a list")
    elif value is not None and not isinstance(value, list):
        raise EvalFileError(key_line(raw, "value", line), f"AgentV skips type: {spelled} when its value is not a "
                            "list", f"value: [{value}], or type: {'icontains' if 'icontains' in kind else 'contains'}")


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


TRAJECTORY_UNREAD = ("input", "output")
"""Keys of an expected tool call that AgentV 2.19 parses past (it keeps tool, args, args_match and
max_duration_ms): a call's input and output are compared by no mode."""


def _unread_item_keys(items: list[Any], line: int, name: str, file: Path, problems: list[Problem]) -> list[Any]:
    """The expected items without `input`/`output`, each said where it is written (AgentV ignores them)."""
    kept: list[Any] = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and any(key in item for key in TRAJECTORY_UNREAD):
            at = item_line(items, index, line)
            for key in TRAJECTORY_UNREAD:
                if key in item:
                    problems.append(no_effect(file, key_line(item, key, at), key,
                                              f"tool_trajectory '{name}': expected[{index}] is compared by its tool, "
                                              "args and max_duration_ms only (AgentV 2.19 reads no call's "
                                              f"{key})", f"args: {{...}}, or no '{key}'"))
            item = {key: value for key, value in item.items() if key not in TRAJECTORY_UNREAD}
        kept.append(item)
    return kept


Warn = Callable[[int, str, str, str], None]
"""(line, key, why it has no effect, what to write instead): a setting AgentV accepts and ignores."""


def _check_args_match(config: ToolTrajectoryConfig, raw: Any, line: int, name: str, warn: Warn) -> None:
    """An `args_match` that compares nothing makes its items match any call of the tool. One that AgentV reads
    nowhere (beside no `args` or `args: any`, or on the evaluator with no item reading it) is a warning: the
    author wrote no args to compare, and AgentV runs such a suite. One that disables a comparison the author
    wrote (`ignore` beside args, an empty path list, paths the item's args lack) is refused where it is
    written, never run as a check that always holds (a deliberate difference, in the README)."""
    raw_items = raw.get("expected") if isinstance(raw, dict) else None
    items: list[Any] = raw_items if isinstance(raw_items, list) else []
    own_line = key_line(raw, "args_match", line)
    readers = 0
    for index, item in enumerate(config.expected or []):
        listed = index < len(items)
        written = items[index] if listed else {}
        at = item_line(items, index, line) if listed else line
        where = f"{name}: expected[{index}] ({item.tool})"
        if item.args_match is None:
            if isinstance(item.args, dict):
                readers += 1
                if config.args_match is not None:
                    _check_compared(config.args_match, item.args, own_line, f"{name}: args_match", where)
            continue
        if not isinstance(item.args, dict):
            warn(key_line(written, "args_match", at), "args_match",
                 f"{where} has {'args: any' if item.args == 'any' else 'no args'}, so any call of {item.tool} "
                 "matches", "args: {...} beside it, or no 'args_match'")
            continue
        if item.args_match == "ignore":
            raise EvalFileError(key_line(written, "args", at), f"{where}: 'args' is never compared with args_match: "
                                                               "ignore", "no 'args' (any call matches), or another args_match")
        _check_compared(item.args_match, item.args, key_line(written, "args_match", at), where, None)
    if config.args_match is not None and not readers:
        warn(own_line, "args_match", f"{name}: no item reads it (each has no 'args' or its own 'args_match')",
             "args: {...} on an item without its own args_match, or no 'args_match' here")


def _check_compared(mode: models.ArgsMatch, args: dict[str, Any], line: int, where: str, item: str | None) -> None:
    """`item` names the expected item when `mode` is the evaluator's own, which several items share."""
    if mode == "ignore" and item is not None:
        raise EvalFileError(line, f"{where} ignore never compares the args of {item.split(': ', 1)[1]}",
                            "no 'args' on that item, or another args_match")
    if not isinstance(mode, list):
        return
    if not mode:
        raise EvalFileError(line, f"{where}: args_match [] compares nothing" if item is None
                            else f"{where} [] compares nothing", "the dot paths to compare, such as [query]")
    if item is None:
        missing = next((path for path in mode if value_at_path(args, path) is ABSENT), None)
        if missing is not None:
            raise EvalFileError(line, f"{where}: args_match path '{missing}' is not in this item's args, so it "
                                      "compares nothing", f"paths among {', '.join(sorted(args)) or 'the args'}")
    elif not any(value_at_path(args, path) is not ABSENT for path in mode):
        raise EvalFileError(line, f"{where} [{', '.join(mode)}] compares none of the args of {item.split(': ', 1)[1]}",
                            "paths the items' args hold, or args_match on the item")


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


FIELD_SETTINGS_READ_BY = {"tolerance": "numeric_tolerance", "relative": "numeric_tolerance", "formats": "date"}
"""A `field_accuracy` field's settings that only one `match` reads."""


def _check_settings(config: EvaluatorConfig, raw: Any, line: int, warn: Warn) -> None:
    """Settings that are each valid alone but mean nothing together: refused, never silently dropped."""
    name = f"{config.type} evaluator '{config.name}'"
    if isinstance(config, ToolTrajectoryConfig):
        if config.mode == "any_order":
            if not config.minimums:
                raise EvalFileError(line, f"{name}: mode any_order needs 'minimums'", "minimums: {tool: count, ...}")
            if config.expected is not None or config.args_match is not None:
                raise EvalFileError(line, f"{name}: mode any_order reads only 'minimums', not 'expected'/'args_match'",
                                    "minimums: {tool: count}, or another mode for a list of expected calls")
            unchecked = next((tool for tool, count in config.minimums.items() if count == 0), None)
            if unchecked is not None:
                written = raw.get("minimums") if isinstance(raw, dict) else None
                raise EvalFileError(key_line(written, unchecked, key_line(raw, "minimums", line)),
                                    f"{name}: minimums: {unchecked}: 0 is met with no call at all, so it checks nothing",
                                    f"a minimum of 1 or more for {unchecked}, or no entry for it")
            return
        if config.minimums is not None:
            raise EvalFileError(line, f"{name}: 'minimums' is read only in mode any_order", "expected: [{tool: ...}]")
        if config.expected is None or (not config.expected and config.mode != "subset"):
            raise EvalFileError(line, f"{name}: mode {config.mode} needs a non-empty 'expected' list",
                                "expected: [{tool: name, args: {...}}, ...]")
        if config.mode in ("subset", "superset"):
            timed = [i.tool for i in config.expected if i.max_duration_ms is not None]
            if timed:
                raise EvalFileError(line, f"{name}: max_duration_ms ({', '.join(timed)}) is checked only in modes "
                                    "in_order and exact", f"mode: in_order, or no max_duration_ms in mode {config.mode}")
        if config.mode == "exact" and isinstance(raw, dict) and raw.get("negate") is True:
            # exact scores a different number of calls stricter than AgentV on purpose (an extra call costs
            # here, not there): negated, that stricter score becomes a looser one than AgentV's
            raise EvalFileError(key_line(raw, "negate", line), f"{name}: negate: true on mode exact, which agentv-gate "
                                "scores stricter than AgentV (an extra call counts): negated it would pass more",
                                "no negate, or mode in_order/superset for a trajectory that must not happen")
        _check_args_match(config, raw, line, name, warn)
    elif isinstance(config, FieldAccuracyConfig):
        raw_fields = raw.get("fields") if isinstance(raw, dict) else None
        if not config.fields:  # scored 1 (nothing to get wrong): a pass whatever the answer
            raise EvalFileError(key_line(raw, "fields", line), f"{name}: 'fields' is empty, so it checks nothing",
                                "fields: [{path: ...}, ...]")
        for index, spec in enumerate(config.fields):
            written = raw_fields[index] if isinstance(raw_fields, list) and index < len(raw_fields) else {}
            field_line = item_line(raw_fields, index, line) if isinstance(raw_fields, list) else line
            where = f"{name}: fields[{index}] ({spec.path})"
            if not [part for part in re.split(r"\.|\[|\]", spec.path) if part]:
                # resolves to nothing in the expected answer either, which scores a field 1: "no expected value"
                raise EvalFileError(key_line(written, "path", field_line), f"{where}: path {spec.path!r} names no field",
                                    "a path such as invoice.total or items[0].sku")
            if isinstance(written, dict) and "match" not in written:
                # AgentV skips such a field with a warning: counted here as `exact`, a matching one lifted
                # the average above what AgentV scores
                raise EvalFileError(field_line, f"{where} has no 'match': AgentV skips a field without one, so it "
                                    "is never checked there", "match: exact (or numeric_tolerance, or date)")
            if spec.formats is not None and not spec.formats:
                raise EvalFileError(key_line(written, "formats", field_line), f"{where}: 'formats' lists no format "
                                                                              "(the defaults would be used unsaid)",
                                    "formats such as [YYYY-MM-DD], or no 'formats' for the defaults")
            for key, reader in FIELD_SETTINGS_READ_BY.items():
                if key in written and spec.match != reader:
                    raise EvalFileError(
                        key_line(written, key, field_line),
                        f"{where}: '{key}' is read only with match: {reader} "
                        f"(this field's match is {spec.match})", f"match: {reader} beside it, or no '{key}'")
            if spec.tolerance is not None and not (math.isfinite(spec.tolerance) and spec.tolerance >= 0):
                # an infinite tolerance passes every number the answer holds, a negative one fails every one
                raise EvalFileError(key_line(written, "tolerance", field_line),
                                    f"{where}: tolerance {spec.tolerance} is not a finite number >= 0",
                                    "a tolerance such as 0.01")
            if config.aggregation == "all_or_nothing" and "weight" in written:
                raise EvalFileError(key_line(written, "weight", field_line),
                                    f"{where}: 'weight' is not read with aggregation: all_or_nothing (1 only when "
                                    "every field matches)", "aggregation: weighted_average beside it, or no 'weight'")
    elif isinstance(config, TokenUsageConfig):
        if config.max_total is None and config.max_input is None and config.max_output is None:
            raise EvalFileError(line, f"{name} sets no limit", "max_total, max_input and/or max_output")
    elif isinstance(config, ExecutionMetricsConfig):
        limits = ("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms",
                  "target_exploration_ratio")
        if all(getattr(config, key) is None for key in limits):
            raise EvalFileError(line, f"{name} sets no limit", f"one or more of {', '.join(limits)}")
        if config.target_exploration_ratio is None and isinstance(raw, dict) and "exploration_tolerance" in raw:
            raise EvalFileError(line, f"{name}: exploration_tolerance without target_exploration_ratio",
                                "target_exploration_ratio: 0.6 beside it")
        target = config.target_exploration_ratio
        if target is not None and config.exploration_tolerance >= max(target, 1 - target):
            # every ratio lies in 0..1, so each is within the tolerance of the target: a check nothing fails
            raise EvalFileError(key_line(raw, "exploration_tolerance", line),
                                f"{name}: exploration_tolerance {config.exploration_tolerance} around "
                                f"target_exploration_ratio {target} accepts every ratio",
                                f"a tolerance under {max(target, 1 - target):g}")
