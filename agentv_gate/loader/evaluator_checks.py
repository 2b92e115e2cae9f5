"""The rules an evaluator config must keep once it validates, as one check per config class.

Each check refuses, where it is written, a config whose settings are each valid alone but together
would score as AgentV does not, or check nothing (a wrong pass): `CHECKS` is keyed by config class,
so a new kind adds a row. Numbers every kind shares (its weight, a timeout) are checked first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ..base.defaults import MAX_DURATION_MS
from ..base.jscompat import compile_js_regex
from ..errors import EvalFileError
from ..models import (
    ABSENT,
    ArgsMatch,
    CodeJudgeConfig,
    CompositeConfig,
    CustomAssertionConfig,
    EvaluatorConfig,
    ExecutionMetricsConfig,
    FieldAccuracyConfig,
    LlmJudgeConfig,
    PromptScriptConfig,
    RegexConfig,
    TokenUsageConfig,
    ToolTrajectoryConfig,
    aggregator_kind,
    value_at_path,
)
from .evaluator_written import Written
from .yaml_lines import item_line, key_line

Warn = Callable[[int, str, str, str], None]
"""(line, key, why it has no effect, what to write instead): a setting AgentV accepts and ignores."""


def check(config: EvaluatorConfig, w: Written) -> None:
    """Numbers that would make a wrong verdict, refused where they are written: a NaN weight makes the
    case's score NaN (a fail that reads like nothing), a negative one lets a failing evaluator raise
    the score, an infinite timeout never ends. Then the kind's own rules (`CHECKS`)."""
    label = f"{w.kind} evaluator '{config.name}'"
    if not math.isfinite(config.weight) or config.weight < 0:
        raise EvalFileError(w.line, f"{label}: weight {config.weight} is not a finite number >= 0",
                            "a weight such as 1 or 0.5")
    for key, seconds in TIMEOUTS.get(type(config), _no_timeouts)(config):
        _check_timeout(key, seconds, label, w.line)
    CHECKS.get(type(config), _nothing)(config, w)


def _check_timeout(key: str, seconds: Any, label: str, line: int) -> None:
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not math.isfinite(seconds) or seconds <= 0):
        raise EvalFileError(line, f"{label}: {key} {seconds!r} is not a finite number > 0",
                            "a number of seconds such as 30")
    if seconds is not None and seconds > MAX_DURATION_MS / 1000:
        raise EvalFileError(line, f"{label}: {key} {seconds!r} is longer than any run waits",
                            f"at most {MAX_DURATION_MS / 1000:.3f} seconds")


def _no_timeouts(config: Any) -> list[tuple[str, Any]]:
    return []


def _nothing(config: Any, w: Written) -> None:
    return None


def _script_timeout(config: CodeJudgeConfig | CustomAssertionConfig) -> list[tuple[str, Any]]:
    return [("timeout_seconds", config.timeout_seconds)]


def _prompt_timeout(config: LlmJudgeConfig) -> list[tuple[str, Any]]:
    prompt = config.prompt
    return [("prompt.timeout_seconds", prompt.timeout_seconds)] if isinstance(prompt, PromptScriptConfig) else []


def _aggregator_timeout(config: CompositeConfig) -> list[tuple[str, Any]]:
    """Read as `timeout_seconds or the default`: a 0 would quietly become 120 s, text an error per case."""
    if aggregator_kind(config.aggregator) != "code_judge":
        return []
    return [("aggregator.timeout_seconds", (config.aggregator or {}).get("timeout_seconds"))]


TIMEOUTS: dict[type[Any], Callable[[Any], list[tuple[str, Any]]]] = {
    CodeJudgeConfig: _script_timeout, CustomAssertionConfig: _script_timeout,
    LlmJudgeConfig: _prompt_timeout, CompositeConfig: _aggregator_timeout,
}
"""Config class -> its timeouts as (key, seconds written)."""


def _regex(config: RegexConfig, w: Written) -> None:
    """A regex that cannot compile is refused here, so `validate` says so instead of every case erroring at run time."""
    try:
        compile_js_regex(config.value, config.flags)
    except ValueError as exc:
        raise EvalFileError(w.line, f"{w.kind} evaluator '{config.name}': {exc}", "a pattern that compiles") from None


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




def _trajectory(config: ToolTrajectoryConfig, w: Written) -> None:
    """Modes and the settings each reads: one that reads nothing written, or checks nothing, is refused."""
    name, raw, line = f"{config.type} evaluator '{config.name}'", w.raw, w.line
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
    _check_args_match(config, raw, line, name, w.warn)


FIELD_SETTINGS_READ_BY = {"tolerance": "numeric_tolerance", "relative": "numeric_tolerance", "formats": "date"}
"""A `field_accuracy` field's settings that only one `match` reads."""


def _fields(config: FieldAccuracyConfig, w: Written) -> None:
    """Each field's settings as its `match` reads them; a weight past any score, or a field never checked, refused."""
    name, raw, line = f"{config.type} evaluator '{config.name}'", w.raw, w.line
    label = f"{w.kind} evaluator '{config.name}'"
    for index, spec in enumerate(config.fields):
        if not math.isfinite(spec.weight) or spec.weight < 0:
            raise EvalFileError(line, f"{label}: fields[{index}].weight {spec.weight} is not a finite number >= 0",
                                "a weight such as 1 or 0.5")
    check_weight_total([spec.weight for spec in config.fields], line, f"{label}: the weights of its fields")
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


def _token_usage(config: TokenUsageConfig, w: Written) -> None:
    name, line = f"{config.type} evaluator '{config.name}'", w.line
    if config.max_total is None and config.max_input is None and config.max_output is None:
        raise EvalFileError(line, f"{name} sets no limit", "max_total, max_input and/or max_output")


def _metrics(config: ExecutionMetricsConfig, w: Written) -> None:
    name, raw, line = f"{config.type} evaluator '{config.name}'", w.raw, w.line
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


def _check_compared(mode: ArgsMatch, args: dict[str, Any], line: int, where: str, item: str | None) -> None:
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


CHECKS: dict[type[Any], Callable[[Any, Written], None]] = {
    RegexConfig: _regex, ToolTrajectoryConfig: _trajectory, FieldAccuracyConfig: _fields,
    TokenUsageConfig: _token_usage, ExecutionMetricsConfig: _metrics,
}
"""Config class -> the rules its settings keep together (after the shared numbers)."""
