"""`agentv-gate validate`: load every eval file, print each problem at file:line, run nothing.

In GitHub Actions each problem is also annotated at its place, and the job summary lists them,
or says how many files and cases are valid.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..base.problems import Problem
from ..errors import EXIT_FAILED, EXIT_OK, ConfigError, NoCasesError, ReportWriteError
from ..loader import nothing_found, plan_paths
from ..loader.judge_floor import load_judge_floor
from ..loader.quarantine import find_gate_config, load_quarantine
from ..redaction import redact
from ..report.github import write_github_problems
from ..report.text import inert_lines, inert_log_text, one_line
from ..targets.preflight import unset_variables
from ..targets.resolver import TargetsCheck, check_targets, locate_targets_file
from ._eval_paths import eval_paths


@dataclass(frozen=True)
class _Located:
    """An eval file where the targets file is looked for above, when none of its cases loaded."""

    source_file: Path
    target: str | None = None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _tell_github(problems: list[Problem], failed: bool, files: int, cases: int) -> None:
    """Annotations and a job summary section, when running in GitHub Actions (else nothing)."""
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = len(problems) - errors
    if failed:
        heading = "eval files have problems"
        lead = (f"❌ {_plural(errors, 'error')}, {_plural(warnings, 'warning')} in {_plural(files, 'file')} "
                "(exit 1); each is annotated at its line.")
    else:
        heading = "eval files valid"
        lead = f"✅ {_plural(files, 'file')}, {_plural(cases, 'case')} valid" + (
            f" ({_plural(warnings, 'warning')})" if warnings else "") + "."
    try:
        write_github_problems(heading, lead, problems)
    except ReportWriteError as exc:
        print(f"agentv-gate: {exc}", file=sys.stderr)


def _unset_note(checked: TargetsCheck) -> str:
    """One line naming the environment variables validation did not need but a run will."""
    if not checked.missing_env:
        return ""
    variables = sorted(unset_variables(p for found in checked.missing_env.values() for p in found))
    targets = ", ".join(sorted(checked.missing_env))
    return (f"note: not set here, needed by `run`: {', '.join(variables)} (target(s) {targets}); "
            "`validate --require-env` checks them too")


def execute(args: argparse.Namespace) -> int:
    paths = eval_paths(args)
    plan = plan_paths(paths, args.repo_root, args.allow_outside_root, args.allow_unknown_keys, digests=False)
    gate_config = find_gate_config(plan.files)
    quarantine = load_quarantine(gate_config)
    plan.problems.extend(quarantine.problems + quarantine.notices([(ref.suite, ref.id) for ref in plan.refs]))
    floor = load_judge_floor(gate_config)
    plan.problems.extend(floor.problems if floor is not None else [])
    unset_note = ""
    no_targets = False
    if plan.refs:
        checked = check_targets(args.targets, plan.refs, args.allow_unknown_keys, require_env=args.require_env)
        no_targets = checked is None
        if checked is not None:
            plan.problems.extend(checked.problems)
            unset_note = _unset_note(checked)
    elif plan.files:  # no file loaded a case: still say that `run` would find no targets file either
        no_targets = locate_targets_file(args.targets, [_Located(Path(f)) for f in plan.files]) is None
    for problem in plan.problems:
        # a value read from a secret `${{ VAR }}` included; eval-file text never becomes a workflow command
        print(inert_lines(one_line(redact(str(problem)))))
    if no_targets:
        # `run` stops on it (exit 2): a check that passed here would promise a run that cannot start.
        # The eval files' own problems are printed above first, so one run names every problem.
        raise ConfigError("no targets file: create .agentv/targets.yaml (see `agentv-gate init`) or pass "
                          "--targets FILE; `run` needs one to know which agent answers the cases"
                          + (f" (and the {len(plan.errors)} error(s) above)" if plan.errors else ""))
    if not plan.files and not plan.errors:
        raise NoCasesError(nothing_found("files", paths))
    if args.verbose:
        counts = Counter(ref.file_index for ref in plan.refs)
        for index, file in enumerate(plan.files):
            # A file name is the repository's text: one line, inert in a CI log.
            print(inert_log_text(f"{one_line(str(file))}: {counts[index]} case(s)"), file=sys.stderr)
    if not args.quiet:
        for index, said in plan.generations.items():
            print(inert_log_text(one_line(f"{plan.files[index]}: {said}")), file=sys.stderr)
    failed = bool(plan.errors or (args.strict and plan.warnings))
    if plan.refs or failed:
        _tell_github(plan.problems, failed, len(plan.files), len(plan.refs))
    if failed:
        print(f"{len(plan.errors)} error(s), {len(plan.warnings)} warning(s) in {len(plan.files)} file(s)",
              file=sys.stderr)
        return EXIT_FAILED
    if not plan.refs:
        raise NoCasesError(nothing_found("cases", paths))
    if not args.quiet:
        print(f"ok: {len(plan.refs)} case(s) in {len(plan.files)} file(s)", file=sys.stderr)
    if unset_note:
        print(inert_lines(unset_note), file=sys.stderr)
    return EXIT_OK
