"""`agentv-gate judge-check RESULTS.jsonl [EVAL PATHS]`: how far each LLM judge can be trusted.

Each case of the results file that an LLM judge of the eval files grades is judged again `--asks`
times (default 5) on the answer the results file holds: no target is called, every judge call is
fresh (never the response cache). Per judge: the flip rate, the mean and spread of its scores, the
cases that flip most; with `--labels labels.jsonl`, its agreement with the humans (accuracy, Cohen's
kappa, the confusion matrix). A table, or `--json`; `OUTPUT_DIR/judge-check.json` and a "Judges"
section in `OUTPUT_DIR/report.html` either way. The JSON is what `.agentv/gate.yaml`'s `judges.check`
reads, so a committed one sets which judges are advisory (`loader/judge_floor.py`).

Exit 0 once measured (the measure is the answer, not a verdict); 2 for a usage or configuration
error, 3 when no judged case of the results file is in the eval files.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..base.defaults import DEFAULT_JUDGE_TIMEOUT_SECONDS, DEFAULT_WORKERS
from ..base.files import atomic_write_text
from ..case_run import CaseRun
from ..errors import EXIT_OK, ConfigError, NoCasesError, ReportWriteError, UsageError
from ..evaluators.registry import build_evaluator_registry
from ..execution.rejudge import Mark
from ..loader import plan_paths
from ..models import CaseResult, EvalCase, EvaluationContext, LlmJudgeConfig, Message
from ..orchestrator import judge_once
from ..redaction import redact
from ..report.html import write_html
from ..report.jsonl import describe_os_error, ensure_parent
from ..report.judge_check import (
    CaseAsks,
    JudgeReport,
    build_reports,
    html_section,
    judge_check_json,
    read_labels,
    table_lines,
    unmatched_labels,
)
from ..report.paths import suite_path
from ..report.text import inert_json, inert_lines, one_line
from ..targets.resolver import TargetResolver
from ._eval_paths import eval_paths
from ._outputs import output_paths
from ._previous import read_previous
from ._select import select_cases

MAX_ASKS = 50


def _judges(case: EvalCase) -> list[LlmJudgeConfig]:
    """The case's LLM judges, each to be asked once a call (its own `rejudge_on_fail` off: the check
    counts single verdicts); a case with no evaluator is graded by the default judge."""
    configs = [config for config in case.evaluators if isinstance(config, LlmJudgeConfig)]
    if not case.evaluators:
        configs = [LlmJudgeConfig(name="llm_judge")]
    return [config.model_copy(update={"rejudge_on_fail": 0}) for config in configs]


def execute(args: argparse.Namespace) -> int:
    if not 1 <= args.asks <= MAX_ASKS:
        raise UsageError(f"--asks {args.asks} is not in 1..{MAX_ASKS}")
    if args.workers is not None and not 1 <= args.workers <= 256:
        raise UsageError(f"--workers {args.workers} is not in 1..256")
    rows = [row for row in read_previous(args.results, f"{args.results} holds no results rows")
            if row.verdict != "error" or row.candidate_answer]
    plan = plan_paths(eval_paths(args), args.repo_root, args.allow_outside_root, args.allow_unknown_keys)
    for problem in plan.problems:
        print(inert_lines(one_line(redact(str(problem)))), file=sys.stderr)
    if plan.errors:
        raise ConfigError(f"{len(plan.errors)} problem(s) in eval files; nothing was judged",
                          problems=plan.problems)
    by_case: dict[tuple[str, str], list[CaseResult]] = {}
    for row in rows:
        by_case.setdefault((row.suite, row.eval_id), []).append(row)
    refs = [ref for ref in select_cases(args, plan.refs, None) if (ref.suite, ref.id) in by_case]
    cases = [case for case in plan.read_cases(refs) if _judges(case)]
    if not cases:
        raise NoCasesError(f"no case of {args.results} is graded by an LLM judge of the eval files given")
    resolver = TargetResolver.from_options(args.targets, None, refs)
    try:
        asks = _ask_all(args, resolver, cases, by_case)
    finally:
        resolver.close()
    thresholds = {(suite_path(row), row.eval_id): row.threshold for row in rows}
    labels = read_labels(args.labels, thresholds) if args.labels is not None else []
    for label in unmatched_labels(labels, asks):
        print(f"agentv-gate: warning: --labels {args.labels}:{label.line}: no case '{one_line(label.eval_id)}' of "
              f"{one_line(label.file)} judged by '{one_line(label.judge)}' in this check; the label is not counted",
              file=sys.stderr)
    reports = build_reports(asks, labels)
    data = judge_check_json(reports, args.asks, str(args.results))
    _write_outputs(args, rows, reports, data)
    if args.json:
        print(inert_json(json.dumps(data, indent=2)))
    else:
        print("\n".join(table_lines(reports, args.asks)))
    return EXIT_OK


def _ask_all(args: argparse.Namespace, resolver: TargetResolver, cases: list[EvalCase],
             by_case: dict[tuple[str, str], list[CaseResult]]) -> list[CaseAsks]:
    """Every (case, target row, judge) asked `--asks` times, the calls spread over `--workers` threads."""
    registry = build_evaluator_registry(None, resolver.judge_resolver(),
                                        judge_timeout_seconds=args.judge_timeout or DEFAULT_JUDGE_TIMEOUT_SECONDS,
                                        targets=resolver)
    jobs: list[tuple[CaseAsks, EvalCase, LlmJudgeConfig, CaseResult]] = []
    for case in cases:
        for row in by_case[(case.suite, case.id)]:
            for config in _judges(case):
                jobs.append((CaseAsks(config.name, row.suite, suite_path(row), row.eval_id, row.target), case,
                             config, row))

    def ask(job: tuple[CaseAsks, EvalCase, LlmJudgeConfig, CaseResult]) -> None:
        asked, case, config, row = job
        run = CaseRun(eval_dir=str((case.suite_file or case.source_file).resolve().parent), use_cache=False)
        context = EvaluationContext(eval_case=case, candidate=row.candidate_answer, evaluator=config,
                                    output_messages=[Message(role="assistant", content=row.candidate_answer)],
                                    target=row.target, run=run)
        score = judge_once(registry, config, context)
        if score.error:
            asked.errors.append(score.error)
            return
        asked.scores.append(score.score)
        asked.passed.append(not Mark(row.threshold, config.required_mark).fails(score))

    def ask_every_time(job: tuple[CaseAsks, EvalCase, LlmJudgeConfig, CaseResult]) -> None:
        for _ in range(args.asks):
            ask(job)

    # One thread per job keeps a job's calls in order; the calls of different jobs overlap.
    with ThreadPoolExecutor(max_workers=args.workers or DEFAULT_WORKERS) as pool:
        list(pool.map(ask_every_time, jobs))
    return [job[0] for job in jobs]


def _write_outputs(args: argparse.Namespace, rows: list[CaseResult], reports: list[JudgeReport],
                   data: dict[str, Any]) -> None:
    """`OUTPUT_DIR/judge-check.json` (what gate.yaml's `judges.check` may name) and report.html with the section."""
    _, _, page = output_paths(args.output_dir, None, None)
    target = args.output_dir / "judge-check.json"
    try:
        ensure_parent(target)
        atomic_write_text(target, json.dumps(data, indent=2) + "\n")
    except OSError as exc:
        raise ReportWriteError(f"cannot write {target}: {describe_os_error(exc)}") from exc
    write_html(rows, page, extra=html_section(reports, args.asks))


__all__ = ["execute"]
