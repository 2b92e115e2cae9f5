"""The single entry point: `run` (default), `validate`, `merge`, `init`.

Only this module decides exit codes: 0 everything passed, 1 some case failed or errored,
2 configuration or usage error (bad flags, eval files that do not load, no cases found).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__
from .loader import default_eval_paths, plan_paths

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
COMMANDS = ("run", "validate", "merge", "init")


def _add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, default=None,
                        help="eval files or folders (default: ./evals, else .)")
    parser.add_argument("--repo-root", type=Path, default=None,
                        help="root for '/'-prefixed file references (default: nearest folder with .git)")
    parser.add_argument("--allow-outside-root", action="store_true",
                        help="let scripts and file references resolve outside the repository root")
    parser.add_argument("--allow-unknown-keys", action="store_true",
                        help="report keys agentv-gate does not know as warnings, not errors (never AgentV "
                             "features it does not run yet)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentv-gate", description="Gate pull requests on AgentV-compatible agent evals.")
    parser.add_argument("--version", action="version", version=f"agentv-gate {__version__}")
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run eval suites and gate on the threshold (default command)")
    _add_load_options(run)
    run.add_argument("--threshold", type=float, default=None, help="pass mark 0..1 (default 0.8; YAML overrides)")
    run.add_argument("--targets", type=Path, default=None, help="targets file (default: .agentv/targets.yaml)")
    run.add_argument("--target", default=None, help="target name to use for every case")
    run.add_argument("--workers", type=int, default=None, help="cases run at once (default 8)")
    run.add_argument("--output-dir", type=Path, default=Path(".agentv-gate"), help="where results go")
    run.add_argument("--junit", type=Path, default=None, help="JUnit XML path (default OUTPUT_DIR/junit.xml)")
    run.add_argument("--results", type=Path, default=None, help="JSONL path (default OUTPUT_DIR/results.jsonl)")
    run.add_argument("--shard", default=None, help="K/N: run only shard K of N (1-based)")
    run.add_argument("--cache-dir", type=Path, default=None, help="response cache folder")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    run.add_argument("--judge-timeout", type=float, default=None, help="seconds before a code judge is killed")
    run.add_argument("--quiet", action="store_true", help="only the summary")

    validate = sub.add_parser("validate", help="check eval files without running anything")
    _add_load_options(validate)
    validate.add_argument("--strict", action="store_true", help="warnings fail too")
    validate.add_argument("--targets", type=Path, default=None,
                          help="targets file to check target and judge names against (default: .agentv/targets.yaml)")

    merge = sub.add_parser("merge", help="join shard results into one report and verdict")
    merge.add_argument("results", nargs="+", type=Path, help="results JSONL files from shards")
    merge.add_argument("--output-dir", type=Path, default=Path(".agentv-gate"))
    merge.add_argument("--junit", type=Path, default=None)
    merge.add_argument("--results-out", type=Path, default=None, dest="results_out")

    init = sub.add_parser("init", help="write a starter eval suite, judge and targets file")
    init.add_argument("folder", nargs="?", type=Path, default=Path("."))
    return parser


def cmd_validate(args: argparse.Namespace) -> int:
    result = plan_paths(default_eval_paths(args.paths), args.repo_root, args.allow_outside_root,
                        args.allow_unknown_keys)
    unchecked = ""
    if result.refs:
        from .targets.resolver import check_targets

        target_problems = check_targets(args.targets, result.refs, args.allow_unknown_keys)
        result.problems.extend(target_problems or [])
        unchecked = "" if target_problems is not None else " (no .agentv/targets.yaml found: targets not checked)"
    for problem in result.problems:
        print(problem)
    failing = result.errors or (args.strict and result.warnings)
    if not result.files and not result.errors:
        print("no eval files found", file=sys.stderr)
        return EXIT_USAGE
    if failing:
        print(f"{len(result.errors)} error(s), {len(result.warnings)} warning(s) in {len(result.files)} file(s)",
              file=sys.stderr)
        return EXIT_FAILED
    print(f"ok: {len(result.refs)} case(s) in {len(result.files)} file(s){unchecked}", file=sys.stderr)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:
        # Interrupted before any case ran (run handles its own interruptions and writes reports).
        print("agentv-gate: interrupted", file=sys.stderr)
        return 130


def _dispatch(argv: list[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help", "--version")):
        args_list.insert(0, "run")
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code not in (0, None) else EXIT_OK
    if args.command == "validate":
        return cmd_validate(args)
    if args.command == "run":
        from .run_command import cmd_run

        return cmd_run(args)
    if args.command == "merge":
        from .run_command import cmd_merge

        return cmd_merge(args)
    if args.command == "init":
        from .scaffold import cmd_init

        return cmd_init(args)
    parser.print_help()
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
