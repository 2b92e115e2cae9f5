"""`agentv-gate validate`: load every eval file, print each problem at file:line, run nothing."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from ..errors import EXIT_FAILED, EXIT_OK, NoCasesError
from ..loader import default_eval_paths, nothing_found, plan_paths


def execute(args: argparse.Namespace) -> int:
    paths = default_eval_paths(args.paths)
    plan = plan_paths(paths, args.repo_root, args.allow_outside_root)
    for problem in plan.problems:
        print(problem)
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
        print(f"ok: {len(plan.refs)} case(s) in {len(plan.files)} file(s)", file=sys.stderr)
    return EXIT_OK
