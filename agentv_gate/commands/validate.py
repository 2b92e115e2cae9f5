"""`agentv-gate validate`: load every eval file, print each problem at file:line, run nothing."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from ..errors import EXIT_FAILED, EXIT_OK, NoCasesError
from ..loader import nothing_found, plan_paths
from ..redaction import redact
from ..targets.resolver import check_targets
from ._eval_paths import eval_paths


def execute(args: argparse.Namespace) -> int:
    paths = eval_paths(args)
    plan = plan_paths(paths, args.repo_root, args.allow_outside_root, args.allow_unknown_keys)
    unchecked = ""
    if plan.refs:
        target_problems = check_targets(args.targets, plan.refs, args.allow_unknown_keys)
        plan.problems.extend(target_problems or [])
        unchecked = "" if target_problems is not None else " (no .agentv/targets.yaml found: targets not checked)"
    for problem in plan.problems:
        print(redact(str(problem)))  # a value read from a secret `${{ VAR }}` included
    if not plan.files and not plan.errors:
        raise NoCasesError(nothing_found("files", paths))
    if args.verbose:
        counts = Counter(ref.file_index for ref in plan.refs)
        for index, file in enumerate(plan.files):
            print(f"{file}: {counts[index]} case(s)", file=sys.stderr)
    if plan.errors or (args.strict and plan.warnings):
        print(f"{len(plan.errors)} error(s), {len(plan.warnings)} warning(s) in {len(plan.files)} file(s)",
              file=sys.stderr)
        return EXIT_FAILED
    if not plan.refs:
        raise NoCasesError(nothing_found("cases", paths))
    if not args.quiet:
        print(f"ok: {len(plan.refs)} case(s) in {len(plan.files)} file(s){unchecked}", file=sys.stderr)
    return EXIT_OK
