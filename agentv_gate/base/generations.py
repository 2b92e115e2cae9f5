"""Which AgentV generation an evaluator speaks, decided by the type name its eval file writes.

AgentV 3.0 renamed `code_judge` / `llm_judge` to `code-grader` / `llm-grader` and changed what their
scripts and prompts see: a 4.x code-grader reads the answer as a string in `output` (2.x put the
answer's messages there) and replies with `assertions`; a 4.x llm-grader's `{{output}}` is plain text.
A suite may mix both names (a team migrating one judge at a time), so the generation belongs to
each evaluator, never to the run: the name written says which AgentV the author wrote it for.

`GENERATIONS` is the one table of that: per generation, the type names that mean it and what such an
evaluator gets (its payload, the reply it may give, its prompt variables), for the README and for the
layers above, which key their behaviour by the same `Generation` (`CODE_WIRES` in evaluators/code_judge.py
and `LLM_WIRES` in evaluators/llm_judge.py pick each generation's payload and reply reader;
judging/grader_prompts.py holds the 4.x prompts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Generation = Literal["2.x", "4.x"]


@dataclass(frozen=True)
class GenerationRow:
    agentv: str
    """The AgentV release its behaviour is checked against."""
    code_types: tuple[str, ...]
    llm_types: tuple[str, ...]
    payload: str
    reply: str
    prompt: str
    default_threshold: float
    """A case's pass mark when neither its file nor `--threshold` sets one (2.19: 0.5; 4.42: 0.8)."""


GENERATIONS: dict[Generation, GenerationRow] = {
    "2.x": GenerationRow(
        agentv="2.19.0",
        code_types=("code_judge", "code-judge", "code", "script", "code_evaluator", "code-evaluator"),
        llm_types=("llm_judge", "llm-judge", "llm", "judge", "llm_evaluator", "llm-evaluator"),
        payload="`question`, `criteria`, `answer` (text), `output` (the answer's messages), `reference_answer`, "
                "`guideline_files`, `input_files`, `trace_summary`, `config`, and the older names beside them",
        reply="one JSON object: `score` (0..1) with `hits`, `misses`, `reasoning`, `details`",
        prompt="`{{question}}`, `{{answer}}`, `{{reference_answer}}`, `{{criteria}}`, ... (2.19's variables)",
        default_threshold=0.5,
    ),
    "4.x": GenerationRow(
        agentv="4.42.4",
        code_types=("code-grader", "code_grader"),
        llm_types=("llm-grader", "llm_grader"),
        payload="`output` (the answer, text), `messages`, `trace` (events and summary), `trace_summary`, "
                "`criteria`, `expected_output`, `input`, `input_files`, `metadata`, `output_path`, "
                "`workspace_path`, `config`, ...",
        reply="`score` and/or `assertions: [{text, passed, evidence?}]` (no score: passed / total); "
              "plain text: exit code 0 passes, another fails",
        prompt="`{{input}}`, `{{output}}`, `{{expected_output}}` as plain text, `{{criteria}}`, `{{metadata}}`, "
               "`{{rubrics}}`, `{{tool_calls}}`, `{{file_changes}}`",
        default_threshold=0.8,
    ),
}

def pass_mark(own: float | None, flag: float | None, generation: Generation) -> float:
    """A case's pass mark: its own (its file's) threshold, else `--threshold`, else its generation's default.
    One rule for a case that ran and for the row of one that did not."""
    if own is not None:
        return own
    return flag if flag is not None else GENERATIONS[generation].default_threshold


_BY_TYPE: dict[str, Generation] = {
    name: generation for generation, row in GENERATIONS.items() for name in (*row.code_types, *row.llm_types)
}


def judge_type_aliases(kind: str) -> tuple[str, ...]:
    """Every other spelling of a judge's `type:` (`code_judge`, `llm_judge`) that some generation writes, as the
    loader compares them (`-` as `_`): what its config class reads as its own type."""
    field = {"code_judge": "code_types", "llm_judge": "llm_types"}[kind]
    names = (name.replace("-", "_") for row in GENERATIONS.values() for name in getattr(row, field))
    return tuple(name for name in dict.fromkeys(names) if name != kind)


def generation_of_type(raw_type: object, shared: Generation) -> Generation:
    """The generation an evaluator `type:` as written belongs to; a type both generations name alike (rubrics,
    contains, composite, ...) is read as its file's generation (`shared`): `type: rubrics` in a 4.x file is
    4.42's llm-grader, in a 2.x file 2.19's rubric judge."""
    return _BY_TYPE.get(str(raw_type), shared)


REPORTED_TYPES: dict[Generation, dict[str, str]] = {
    "2.x": {},
    "4.x": {"code_judge": "code-grader", "llm_judge": "llm-grader"},
}
"""How a result row names a judge's type, per generation (others: the type with `-` for `_`, as 2.19 writes it)."""


def reported_type(kind: str, generation: Generation) -> str:
    """The `type` of a result row's `scores[]` entry as the evaluator's AgentV writes it (`code-grader` in 4.42)."""
    return REPORTED_TYPES[generation].get(kind) or kind.replace("_", "-")


def is_4x_type(raw_type: object) -> bool:
    """Whether the name exists only in AgentV 3.0 and later (a form that marks its file as 4.x)."""
    return _BY_TYPE.get(str(raw_type)) == "4.x"
