"""A composite evaluator's members and aggregator, read once the composite itself validates.

Its members are parsed as any evaluator list (each reported on its own); then what AgentV would read
differently from what was written is refused or said: weights that are not numbers or name no member,
settings on a member that only a test's own evaluators read, an aggregator it does not know. Its
aggregator's files are resolved as a code judge's are, into a copy of the config.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from ..base.jscompat import is_finite_number
from ..base.problems import Problem
from ..errors import EvalFileError, SkippedEvaluator
from ..models import CompositeConfig, aggregator_kind
from .evaluator_checks import check_weight_total
from .evaluator_files import AGGREGATOR_RESULTS_VARIABLE, aggregator_prompt_file, resolve_cwd, resolve_script
from .evaluator_written import Written
from .yaml_lines import key_line, yaml_kind


def composite(config: CompositeConfig, w: Written) -> CompositeConfig:
    """The composite with its members parsed and its aggregator's prompt and script resolved."""
    config = config.model_copy(update={"evaluators": w.parse_members(w.members)})
    if not config.evaluators:  # each member skipped (or refused, said at its line): both AgentVs skip the composite
        raise SkippedEvaluator(w.line, f"composite '{config.name}' has no effect here: AgentV runs none of its members "
                                       "(see their warnings), and skips a composite left with no member evaluators "
                                       "(\"no valid member evaluators\"), so it is not run", "a 'name:' on each member")
    named = _member_weights(config, w)
    _member_settings(config, named, w)
    return _aggregator(config, w)


def _member_weights(config: CompositeConfig, w: Written) -> dict[Any, Any]:
    """The aggregator's `weights`, each a number >= 0 naming a member: AgentV keeps only weights that are
    numbers (`typeof`), so "3" or true was read here as 3 or 1."""
    raw, line = w.raw, w.line
    named = (config.aggregator or {}).get("weights")
    named = named if isinstance(named, dict) else {}
    weights_at = key_line(raw.get("aggregator"), "weights", line)
    for member, weight in named.items():
        at = key_line((config.aggregator or {}).get("weights"), member, weights_at)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
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
    if stray is not None and isinstance(w.members, list) and len(members) == len(w.members):
        weights_raw = raw["aggregator"].get("weights")
        raise EvalFileError(key_line(weights_raw, stray, key_line(raw.get("aggregator"), "weights", line)),
                            f"composite '{config.name}': aggregator weights name '{stray}', which is none of its "
                            f"members ({', '.join(members)}), so that weight is never read",
                            "a member's name (an unnamed member is named as AgentV names it: is-json, contains-x)")
    return named


def _member_settings(config: CompositeConfig, named: dict[Any, Any], w: Written) -> None:
    """A member's `required`, `weight` and `negate` are read on a test's own evaluators only: each said."""
    for member in config.evaluators:
        at = member.source_line or w.line
        if member.required_mark is not None:
            w.problems.append(Problem(w.file, at, f"'required' on composite member '{member.name}': required gates "
                                      "apply to a test's own evaluators, not to a composite's members",
                                      "'required' on the composite itself"))
        if "weight" in member.model_fields_set:
            unread = _unread_member_weight(member.name, aggregator_kind(config.aggregator), named)
            w.problems.append(Problem(w.file, at, f"'weight' on composite member '{member.name}': {unread[0]}",
                                      unread[1]))
        if (member.model_extra or {}).get("negate") is True:
            w.problems.append(Problem(w.file, at, f"'negate' on composite member '{member.name}': negate applies to "
                                      "a test's own evaluators; the composite scores its members as they are",
                                      "'negate' on the composite itself, or a member that checks the opposite"))


def _aggregator(config: CompositeConfig, w: Written) -> CompositeConfig:
    """The aggregator known (found here, not as every case's error once the run is paid for), an LLM one's
    prompt file read, and a code one's script found, checked and kept inside the repository root exactly
    as a code_judge's own script."""
    raw, line = w.raw, w.line
    aggregator = config.aggregator or {}
    aggregating = aggregator_kind(aggregator)
    if aggregating is None:
        # both AgentVs skip it: "Skipping composite evaluator 'c' in 'case': invalid aggregator type 'x'"
        raise SkippedEvaluator(key_line(raw.get("aggregator"), "type", key_line(raw, "aggregator", line)),
                               f"composite '{config.name}' has no effect here: its aggregator type "
                               f"{aggregator.get('type')!r} is none AgentV knows, and AgentV skips such a composite, "
                               "so it is not run", "weighted_average, threshold, code_judge or llm_judge")
    written = aggregator.get("prompt")
    if aggregating == "llm_judge":
        aggregator = aggregator_prompt_file(aggregator, w.roots, raw, line)
        config = config.model_copy(update={"aggregator": aggregator})
    _check_aggregator_settings(config.name, aggregating, aggregator, raw, line)
    if aggregating == "llm_judge" and isinstance(aggregator.get("prompt"), str):
        _aggregator_prompt(config.name, aggregator["prompt"], aggregator["prompt"] is not written, w)
    script = aggregator.get("path", aggregator.get("script"))
    if aggregating != "code_judge" or not isinstance(script, (str, list)) or not script:
        return config
    aggregator_line = key_line(raw, "aggregator", line)
    cwd = resolve_cwd(aggregator.get("cwd"), w.roots, key_line(raw.get("aggregator"), "cwd", aggregator_line))
    script_line = key_line(raw.get("aggregator"), "path" if "path" in aggregator else "script", aggregator_line)
    return config.model_copy(update={"resolved_aggregator_cwd": cwd, "resolved_aggregator_script": resolve_script(
        script, script_line, w.roots, cwd, w.problems, w.file)})


def _check_aggregator_settings(name: str, aggregating: str, aggregator: dict[str, Any], raw: Any, line: int) -> None:
    """A threshold the composite can only refuse once the run is paid for, and an LLM aggregator prompt that is
    not text (AgentV would silently send its default)."""
    at = key_line(raw.get("aggregator"), "type", key_line(raw, "aggregator", line))
    if aggregating == "threshold" and "threshold" in aggregator:
        threshold = aggregator["threshold"]
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise EvalFileError(key_line(raw.get("aggregator"), "threshold", at),
                                f"composite '{name}': aggregator threshold {threshold!r} is not a number from 0 to 1",
                                "the share of members that must pass, such as 0.5")
    if aggregating == "llm_judge" and aggregator.get("prompt") is not None and not isinstance(aggregator["prompt"], str):
        raise EvalFileError(key_line(raw.get("aggregator"), "prompt", at), f"composite '{name}': the aggregator "
                            f"prompt must be text, got {yaml_kind(aggregator['prompt'])}",
                            f"prompt text holding {AGGREGATOR_RESULTS_VARIABLE}, or no prompt (the default)")


def _aggregator_prompt(name: str, prompt: str, from_file: bool, w: Written) -> None:
    """A prompt without `{{EVALUATOR_RESULTS_JSON}}` is sent as written, as AgentV 2.19 and 4.42 send it (they
    replace the variable and nothing else): the judge sees none of the members' results, which is said. Text that
    is only a file name naming no file is refused: AgentV would send the name itself, which the author never meant."""
    if AGGREGATOR_RESULTS_VARIABLE in prompt:
        return
    at = key_line(w.raw.get("aggregator"), "prompt", key_line(w.raw, "aggregator", w.line))
    text = prompt.strip()
    if not from_file and text and not any(c.isspace() for c in text) and PurePosixPath(text).suffix:
        raise EvalFileError(at, f"composite '{name}': aggregator prompt file {text!r} not found",
                            "a file relative to the eval file, or prompt text (holding "
                            f"{AGGREGATOR_RESULTS_VARIABLE} for the members' results)")
    w.problems.append(Problem(w.file, at, f"composite '{name}': the aggregator prompt has no "
                              f"{AGGREGATOR_RESULTS_VARIABLE}, so the judge sees none of the members' results "
                              "(sent as written, as AgentV sends it)",
                              f"{AGGREGATOR_RESULTS_VARIABLE} where the results go", severity="warning",
                              no_effect=True))  # --strict refuses it, as every setting that changes nothing


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
