"""`agentv-gate validate`: load every eval file, print each problem at file:line, run nothing.

In GitHub Actions each problem is also annotated at its place, and the job summary lists them,
or says how many files and cases are valid.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from ..errors import EXIT_FAILED, EXIT_OK, NoCasesError, ReportWriteError
from ..loader import nothing_found, plan_paths
from ..problems import Problem
from ..redaction import redact
from ..report.github import write_github_problems
from ..report.text import inert_lines, inert_log_text, one_line
from ..targets.resolver import check_targets
from ._eval_paths import eval_paths


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


def execute(args: argparse.Namespace) -> int:
    paths = eval_paths(args)
    plan = plan_paths(paths, args.repo_root, args.allow_outside_root, args.allow_unknown_keys, digests=False)
    unchecked = ""
    if plan.refs:
        target_problems = check_targets(args.targets, plan.refs, args.allow_unknown_keys)
        plan.problems.extend(target_problems or [])
        unchecked = "" if target_problems is not None else " (no .agentv/targets.yaml found: targets not checked)"
    for problem in plan.problems:
        # a value read from a secret `${{ VAR }}` included; eval-file text never becomes a workflow command
        print(inert_lines(one_line(redact(str(problem)))))
    if not plan.files and not plan.errors:
        raise NoCasesError(nothing_found("files", paths))
    if args.verbose:
        counts = Counter(ref.file_index for ref in plan.refs)
        for index, file in enumerate(plan.files):
            # A file name is the repository's text: one line, inert in a CI log.
            print(inert_log_text(f"{one_line(str(file))}: {counts[index]} case(s)"), file=sys.stderr)
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
        print(f"ok: {len(plan.refs)} case(s) in {len(plan.files)} file(s){unchecked}", file=sys.stderr)
    return EXIT_OK
