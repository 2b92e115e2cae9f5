"""The single entry point: `run` (default), `validate`, `merge`, `compare`, `plan-trials`, `judge-check`, `init`.

This module parses the command line, hands the Namespace to the command's `execute`, and is the
only place that turns errors into exit codes (the table is `errors.EXIT_CODES`): 0 everything
passed, 1 some case failed or errored, 2 configuration or usage error, 3 no eval cases found,
4 internal error, 130/143 interrupted. A command raises a `GateError`; the one handler below prints
it and returns its code. Any other exception is a bug of ours: it is said in one line (with the
traceback under --verbose), never as a bare traceback a user could take for a failing case.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base.defaults import (
    DEFAULT_JUDGE_CHECK_ASKS,
    DEFAULT_JUDGE_TIMEOUT_SECONDS,
    DEFAULT_THRESHOLD,
    DEFAULT_WORKERS,
    FAIL_ON,
)
from .base.trial_strategies import AGENTV_STRATEGIES, STRATEGIES
from .errors import (
    EXIT_CODES,
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_NO_CASES,
    EXIT_NOT_RUN,
    EXIT_OK,
    EXIT_SIGINT,
    EXIT_USAGE,
    GateError,
)
from .redaction import is_secret_field, redact
from .report.text import inert_lines

COMMANDS: dict[str, str] = {  # name -> module with `execute(args) -> int`; imported on use, so `--version` stays fast
    "run": "agentv_gate.commands.run",
    "validate": "agentv_gate.commands.validate",
    "merge": "agentv_gate.commands.merge",
    "init": "agentv_gate.commands.init",
    "compare": "agentv_gate.commands.compare",
    "plan-trials": "agentv_gate.commands.plan_trials",
    "comment": "agentv_gate.commands.comment",
    "judge-check": "agentv_gate.commands.judge_check",
}


class _Once(argparse.Action):
    """A single-valued option (`store`) that refuses a second, different value rather than let the
    last one silently win: the action's `threshold: 0.9` with `--threshold 0.5` in its `extra-args`
    would otherwise gate at 0.5. The same value twice is no contradiction."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        given: dict[str, object] = namespace.__dict__.setdefault("_given_once", {})
        if self.dest in given and given[self.dest] != values:
            name = "/".join(self.option_strings)
            parser.error(f"{name} given twice ({given[self.dest]}, then {values}): give it once "
                         "(an action input and the same flag in extra-args count as twice)")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


def _add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, default=None,
                        help="eval files or folders (default: ./evals, else .)")
    parser.add_argument("--repo-root", type=Path, action=_Once, default=None,
                        help="root for '/'-prefixed file references (default: nearest folder with .git)")
    parser.add_argument("--allow-outside-root", action="store_true",
                        help="let scripts and file references resolve outside the repository root")
    parser.add_argument("--allow-unknown-keys", action="store_true",
                        help="report keys agentv-gate does not know as warnings, not errors (never AgentV "
                             "features it does not run yet)")


def _add_verbosity_options(parser: argparse.ArgumentParser,
                           quiet: str = "print only what did not pass and the totals (no progress line, no "
                                        "passed cases)",
                           verbose: str = "list every case with each evaluator's score, hits, misses, reasoning "
                                          "and judge stderr, and show the traceback of an internal error") -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", action="store_true", help=quiet)
    group.add_argument("-v", "--verbose", action="store_true", help=verbose)


def _add_pull_request_options(run: argparse.ArgumentParser) -> None:
    """Filters, reruns, a stop after N failures, and gating against the base branch's results."""
    run.add_argument("--test-id", "--eval-id", action="append", default=None, dest="test_id", metavar="GLOB",
                     help="run only cases whose id matches GLOB (repeatable; e.g. 'refund-*')")
    run.add_argument("--suite", action="append", default=None, metavar="GLOB",
                     help="run only suites whose path or file name matches GLOB (repeatable)")
    run.add_argument("--budget-usd", type=float, action=_Once, default=None, dest="budget_usd", metavar="USD",
                     help="stop starting cases once the run's reported cost reaches USD (AgentV 4.x)")
    run.add_argument("--tag", action="append", default=None, metavar="TAG",
                     help="run only suites whose tags include TAG (repeatable: all of them; AgentV 4.x)")
    run.add_argument("--exclude-tag", action="append", default=None, dest="exclude_tag", metavar="TAG",
                     help="leave out suites whose tags include TAG (repeatable)")
    run.add_argument("--list", action="store_true", help="print the cases the run would execute (file:line) and stop")
    rerun = run.add_mutually_exclusive_group()
    rerun.add_argument("--retry-errors", type=Path, action=_Once, default=None, metavar="PREV.jsonl",
                       help="run again only the cases that errored in PREV; the other rows are kept as they were")
    rerun.add_argument("--rerun-failed", type=Path, action=_Once, default=None, metavar="PREV.jsonl",
                       help="run again the cases that failed or errored in PREV; the other rows are kept")
    run.add_argument("--max-failures", type=int, action=_Once, default=None, metavar="N",
                     help="start no new case after N cases failed or errored; the rest are reported as not run")
    run.add_argument("--affected-since", type=Path, action=_Once, default=None, dest="affected_since",
                     metavar="BASE.jsonl", help="run only the cases changed since BASE (their case_digest) or new, "
                     "every case when the agent's files changed (agent_paths: in .agentv/gate.yaml); carry the "
                     "other rows over from BASE, marked carried")
    run.add_argument("--base-ref", action=_Once, default=None, dest="base_ref", metavar="REF",
                     help="with --affected-since: the commit BASE judged (default: the commit its rows record)")
    run.add_argument("--allow-empty-selection", action="store_true", dest="allow_empty_selection",
                     help="with --affected-since: when no case is affected, exit by the carried rows' verdict "
                          "instead of exit 3")
    replay = run.add_mutually_exclusive_group()
    replay.add_argument("--record", type=Path, action=_Once, default=None, metavar="DIR",
                        help="write every target answer to DIR (one JSON file per request), for --replay")
    replay.add_argument("--replay", type=Path, action=_Once, default=None, metavar="DIR",
                        help="answer every target request from the recording DIR: no network, no key; a request "
                             "not recorded makes its case error, naming the field that differs")
    run.add_argument("--record-judges", action="store_true", dest="record_judges",
                     help="with --record: the LLM judges' replies too (a replay then judges from them)")
    _add_baseline_options(run)
    _add_comment_option(run)


def _add_comment_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--comment", action="store_true",
                        help="create or update one pull-request comment with the per-case changes against the "
                             "base and the run's cost (GitHub API; token from AGENTV_GATE_GITHUB_TOKEN or "
                             "GITHUB_TOKEN; a failure to post is a warning, never the exit code)")


def _add_baseline_options(parser: argparse.ArgumentParser) -> None:
    """Gating against the base branch's results: `run`, and `merge` for the whole of a sharded run."""
    parser.add_argument("--baseline", type=Path, action=_Once, default=None, metavar="BASE.jsonl",
                        help="results JSONL of the base branch: reports say per case regressed, still failing, "
                             "fixed or new")
    parser.add_argument("--fail-on", choices=FAIL_ON, action=_Once,
                        default="all", dest="fail_on",
                        help="all: every case must pass (default); regression: fail only for cases that passed "
                             "on the base and do not now, or, with --trials N on both sides, when the paired test "
                             "finds the pass rate fell; case-regression: also when one case fell significantly; "
                             "inconclusive: also when a case fell without significance (needs --baseline)")
    parser.add_argument("--alpha", type=float, action=_Once, default=None, metavar="A",
                        help="with --baseline and trials: the paired tests' significance level (default 0.05)")
    parser.add_argument("--history", type=Path, action=_Once, default=None, metavar="HISTORY.jsonl",
                        help="with --baseline: results rows of earlier runs of the base branch, appended; a case "
                             "whose outcome flipped there (same case digest) is flaky, and with trials its trials "
                             "there are the per-case guard's base evidence")
    parser.add_argument("--max-trials", type=int, action=_Once, default=None, dest="max_trials", metavar="N",
                        help="with --baseline, trials and --fail-on regression: the most head trials the per-case "
                             "guard runs a case whose evidence is short, re-runs included (default: 10 times the "
                             "case's base trials, at most 200)")
    parser.add_argument("--max-drop", type=float, action=_Once, default=None, dest="max_drop", metavar="DELTA",
                        help="with --baseline: a passing case whose score fell by more than DELTA also regressed "
                             "(and fails the gate, with --fail-on all too)")


def _add_judge_check_parser(sub: Any) -> None:
    """`judge-check`: each LLM judge asked k times on a results file's answers (commands/judge_check.py)."""
    check = sub.add_parser("judge-check", help="re-ask each LLM judge k times on a results file's answers: flip "
                                               "rate, score spread, and agreement with human labels")
    check.add_argument("results", type=Path, help="results JSONL whose answers are judged again (no target call)")
    check.add_argument("paths", nargs="*", type=Path, default=None,
                       help="eval files or folders holding the judges (default: ./evals, else .)")
    check.add_argument("--asks", "-k", type=int, action=_Once, default=DEFAULT_JUDGE_CHECK_ASKS, metavar="K",
                       help=f"calls per case and judge (default {DEFAULT_JUDGE_CHECK_ASKS})")
    check.add_argument("--labels", type=Path, action=_Once, default=None, metavar="labels.jsonl",
                       help="human verdicts, one JSON object a line: eval_file, test_id, evaluator, and label "
                            "(pass or fail) or score (0..1): adds accuracy, Cohen's kappa and the confusion matrix")
    check.add_argument("--json", action="store_true", help="print the measures as JSON (what gate.yaml's "
                                                          "judges.check reads)")
    check.add_argument("--output-dir", type=Path, action=_Once, default=Path(".agentv-gate"),
                       help="where judge-check.json and report.html go (default: .agentv-gate)")
    check.add_argument("--test-id", "--eval-id", action="append", default=None, dest="test_id", metavar="GLOB",
                       help="check only cases whose id matches GLOB (repeatable)")
    check.add_argument("--suite", action="append", default=None, metavar="GLOB",
                       help="check only suites whose path or file name matches GLOB (repeatable)")
    check.add_argument("--targets", type=Path, action=_Once, default=None,
                       help="targets file (default: .agentv/targets.yaml)")
    check.add_argument("--workers", type=int, action=_Once, default=None,
                       help=f"judge calls at _Once (default {DEFAULT_WORKERS})")
    check.add_argument("--judge-timeout", type=float, action=_Once, default=None,
                       help=f"seconds before a prompt script is killed (default {DEFAULT_JUDGE_TIMEOUT_SECONDS:g})")
    check.add_argument("--repo-root", type=Path, action=_Once, default=None,
                       help="root for '/'-prefixed file references (default: nearest folder with .git)")
    check.add_argument("--allow-outside-root", action="store_true",
                       help="let scripts and file references resolve outside the repository root")
    check.add_argument("--allow-unknown-keys", action="store_true",
                       help="report keys agentv-gate does not know as warnings, not errors")
    check.add_argument("-q", "--quiet", action="store_true", help="say nothing on stderr but problems")




class _VersionAction(argparse.Action):
    """argparse's `version` action wants the string when the parser is built; reading it costs
    `importlib.metadata` (tens of milliseconds) that only `--version` needs."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from . import __version__

        print(f"agentv-gate {__version__}")
        parser.exit()


_OWN_EXIT_CODES: dict[str, dict[int, str]] = {
    "validate": {EXIT_OK: "every eval file valid", EXIT_FAILED: "a problem in an eval file or the targets "
                 "(a warning too, with --strict)", EXIT_USAGE: "usage error, or no targets file",
                 EXIT_NO_CASES: EXIT_CODES[EXIT_NO_CASES], EXIT_INTERNAL: EXIT_CODES[EXIT_INTERNAL]},
    "init": {EXIT_OK: "files written (existing ones kept)", EXIT_USAGE: EXIT_CODES[EXIT_USAGE],
             EXIT_INTERNAL: EXIT_CODES[EXIT_INTERNAL]},
}
"""The commands whose exits are not `run`'s: their `--help` lists only what they can exit with."""


def _with_exit_codes(command: str | None = None) -> dict[str, Any]:
    """Every `--help` ends with the exit codes (the one table, `errors.EXIT_CODES`, as README.md lists
    them), or the few a command such as `validate` or `init` can exit with."""
    codes = _OWN_EXIT_CODES.get(command or "", EXIT_CODES)
    lines = "\n".join(f"  {code:>3}  {meaning}" for code, meaning in codes.items())
    return {"epilog": f"exit codes:\n{lines}", "formatter_class": argparse.RawDescriptionHelpFormatter}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentv-gate", description="Gate pull requests on AgentV-compatible agent evals.",
                                     **_with_exit_codes())
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run eval suites and gate on the threshold (default command)", **_with_exit_codes())
    _add_load_options(run)
    run.add_argument("--threshold", type=float, action=_Once, default=None,
                     help=f"pass mark 0..1 (default {DEFAULT_THRESHOLD}; YAML overrides)")
    run.add_argument("--targets", type=Path, action=_Once, default=None, help="targets file (default: .agentv/targets.yaml)")
    run.add_argument("--workers", type=int, action=_Once, default=None, help=f"cases run at once (default {DEFAULT_WORKERS})")
    run.add_argument("--output-dir", type=Path, action=_Once, default=Path(".agentv-gate"),
                     help="where results go (default: .agentv-gate)")
    run.add_argument("--junit", type=Path, action=_Once, default=None, help="JUnit XML path (default OUTPUT_DIR/junit.xml)")
    run.add_argument("--results", type=Path, action=_Once, default=None, help="JSONL path (default OUTPUT_DIR/results.jsonl)")
    run.add_argument("--shard", action=_Once, default=None, help="K/N: run only shard K of N (1-based)")
    run.add_argument("--cache-dir", type=Path, action=_Once, default=None, help="response cache folder")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    run.add_argument("--judge-timeout", type=float, action=_Once, default=None,
                     help="seconds before a code judge or an answer preprocessor is killed "
                          f"(default {DEFAULT_JUDGE_TIMEOUT_SECONDS:g})")
    run.add_argument("--skip-missing-env", action="store_true",
                     help="run the cases whose targets and judges have their ${{ VAR }}s set, report the others "
                          f"as not run naming the variable, and exit {EXIT_NOT_RUN} rather than 0 (a fork's pull "
                          "request, without secrets)")
    _add_pull_request_options(run)
    _add_verbosity_options(run)
    # AgentV's execution block from the command line (trials, a matrix of targets)
    run.add_argument("--target", action="append", default=None, metavar="NAME",
                     help="target for every case; repeat it to run each case once per target (a matrix)")
    run.add_argument("--trials", type=int, action=_Once, default=None, metavar="N",
                     help="run every case N times, every trial (its execution.trials strategy, default pass_at_k; "
                          "unlike AgentV's, pass_at_k does not stop at the first pass, so --baseline can compare)")
    ours = ", ".join(name for name in STRATEGIES if name not in AGENTV_STRATEGIES)
    run.add_argument("--trials-strategy", choices=tuple(STRATEGIES),
                     action=_Once, default=None, dest="trials_strategy",
                     help=f"the trials strategy of every case; {ours} (pass^k: every trial must pass) is "
                          "agentv-gate's, AgentV has no such strategy")
    run.add_argument("--rejudge-on-fail", type=int, action=_Once, default=None, dest="rejudge_on_fail", metavar="N",
                     help="ask an LLM judge whose verdict fails up to N more times, fresh, and take the majority "
                          "(a pass costs nothing; code judges and deterministic checks are never asked again); "
                          "an evaluator's or suite execution's rejudge_on_fail wins")
    run.add_argument("--strict", action="store_true",
                     help="refuse to run a suite with a setting that has no effect (AgentV accepts and ignores it; "
                          "a warning otherwise)")

    validate = sub.add_parser("validate", help="check eval files without running anything",
                              **_with_exit_codes("validate"))
    _add_load_options(validate)
    validate.add_argument("--strict", action="store_true", help="warnings fail too")
    validate.add_argument("--targets", type=Path, action=_Once, default=None,
                          help="targets file to check target and judge names against (default: .agentv/targets.yaml)")
    validate.add_argument("--require-env", action="store_true",
                          help="also fail when a ${{ VAR }} the targets read is unset (by default validation needs "
                               "no secrets: unset variables are named in a note, and `run` needs them)")
    _add_verbosity_options(validate, quiet="print only the problems (no 'ok' line)",
                           verbose="also list each eval file with its number of cases, and show the traceback "
                                   "of an internal error")

    merge = sub.add_parser("merge", help="join shard results into one report and verdict", **_with_exit_codes())
    merge.add_argument("results", nargs="+", type=Path, help="results JSONL files from shards")
    merge.add_argument("--output-dir", type=Path, action=_Once, default=Path(".agentv-gate"),
                       help="where the merged junit.xml, results.jsonl and report.html go (default .agentv-gate)")
    merge.add_argument("--junit", type=Path, action=_Once, default=None,
                       help="merged JUnit XML path (default OUTPUT_DIR/junit.xml)")
    merge.add_argument("--results-out", type=Path, action=_Once, default=None, dest="results_out",
                       help="merged results JSONL path (default OUTPUT_DIR/results.jsonl)")
    _add_baseline_options(merge)  # the shards' own, again: the merged verdict means what theirs did
    _add_comment_option(merge)
    _add_verbosity_options(merge)

    compare = sub.add_parser("compare", help="what a change did to each case: base results against head results",
                             **_with_exit_codes())
    compare.add_argument("base", type=Path, help="results JSONL of the base (e.g. main)")
    compare.add_argument("head", type=Path, help="results JSONL of the change")
    compare.add_argument("--min-delta", "--threshold", type=float, action=_Once, default=0.1, dest="min_delta", metavar="DELTA",
                         help="a score change beyond DELTA is a win or a loss, else a tie (default 0.1)")
    compare.add_argument("--max-drop", type=float, action=_Once, default=None, dest="max_drop", metavar="DELTA",
                         help="a case passing on both whose score fell by more than DELTA also regressed")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.add_argument("--fail-on", choices=FAIL_ON[1:], action=_Once,
                         default="regression", dest="fail_on",
                         help="with trials on both sides: regression (default) exits 1 when the paired test finds "
                              "the pass rate fell; case-regression also for one case's significant drop; "
                              "inconclusive also for a case that fell without significance")
    compare.add_argument("--alpha", type=float, action=_Once, default=None, metavar="A",
                         help="the paired tests' significance level (default 0.05)")
    compare.add_argument("--history", type=Path, action=_Once, default=None, metavar="HISTORY.jsonl",
                         help="results rows of earlier base runs: a case whose outcome flipped there is flaky")
    compare.add_argument("--max-trials", type=int, action=_Once, default=None, dest="max_trials", metavar="N",
                         help="the per-case guard's budget of head trials a case, as the run used it")
    compare.add_argument("--output-dir", type=Path, action=_Once, default=Path(".agentv-gate"),
                         help="where report.html goes (default: .agentv-gate)")

    plan = sub.add_parser("plan-trials", help="how many trials per side it takes to detect a drop in pass rate, "
                                              "from a baseline's results")
    plan.add_argument("baseline", type=Path, help="results JSONL of the base, run with --trials N (N >= 2)")
    plan.add_argument("--drop", type=float, action="append", default=None, metavar="POINTS",
                      help="the drop in suite pass rate to detect, in points (repeatable; default 5, 10, 20)")
    plan.add_argument("--alpha", type=float, action=_Once, default=None, metavar="A",
                      help="significance level of the paired test (default 0.05)")
    plan.add_argument("--power", type=float, action=_Once, default=0.8, help="power to reach (default 0.8)")
    plan.add_argument("--max-trials", type=int, action=_Once, default=10, dest="max_trials", metavar="N",
                      help="the most trials a side to consider (default 10)")
    plan.add_argument("--simulations", type=int, action=_Once, default=400, metavar="N",
                      help="simulated pull requests per trial count (default 400)")
    plan.add_argument("--seed", type=int, action=_Once, default=1, help="the simulation's seed (default 1)")
    comment = sub.add_parser("comment", help="post or update the pull-request comment from a results file "
                                             "(for CI systems that run the gate in another step)")
    comment.add_argument("results", type=Path, help="results JSONL of this change (run or merge)")
    comment.add_argument("paths", nargs="*", type=Path, default=None,
                         help="the eval paths the run was given, if any: they pick the same comment as `run --comment`")
    comment.add_argument("--test-id", "--eval-id", action="append", default=None, dest="test_id", metavar="GLOB",
                         help="the run's --test-id filters, if any: with the paths, they pick the comment")
    comment.add_argument("--suite", action="append", default=None, metavar="GLOB",
                         help="the run's --suite filters, if any: with the paths, they pick the comment")
    comment.add_argument("--tag", action="append", default=None, metavar="TAG",
                         help="the run's --tag filters, if any: with the paths, they pick the comment")
    comment.add_argument("--exclude-tag", action="append", default=None, dest="exclude_tag", metavar="TAG",
                         help="the run's --exclude-tag filters, if any: with the paths, they pick the comment")
    _add_baseline_options(comment)
    comment.set_defaults(comment=True)

    _add_judge_check_parser(sub)

    init = sub.add_parser("init", help="write a starter eval suite, judge and targets file", **_with_exit_codes("init"))
    init.add_argument("folder", nargs="?", type=Path, default=Path("."),
                      help="the project folder to write evals/starter.eval.yaml, its judge and "
                           ".agentv/targets.yaml into (default: the current folder); existing files are kept")
    return parser


def _with_default_command(argv: Sequence[str] | None) -> list[str]:
    """`agentv-gate evals/` means `agentv-gate run evals/`: anything not naming a command runs."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0] not in COMMANDS and args[0] not in ("-h", "--help", "--version")):
        args.insert(0, "run")
    return args


def _unknown_command(word: str) -> str | None:
    """The error for a first word that is no command and no path but close to a command (a typo,
    `valdate`): taken as a path for `run`, it would only say "no such file". None otherwise."""
    if word.startswith("-") or word in COMMANDS or Path(word).exists():
        return None
    close = difflib.get_close_matches(word, list(COMMANDS), n=3, cutoff=0.7)
    if not close:
        return None
    return (f"unknown command '{word}', did you mean " + " or ".join(f"'{c}'" for c in close)
            + f"? (commands: {', '.join(COMMANDS)}; a path runs `run` on it)")


def _report_internal_error(exc: Exception, verbose: bool) -> None:
    """One line naming the bug, the traceback only under --verbose; secrets from the environment scrubbed.

    A bug's message was not written for users, so it may hold anything the code had at hand: every
    environment value whose name says it is a secret (`OPENAI_API_KEY`, `GITHUB_TOKEN`) becomes `***`.
    """
    secrets = [value for name, value in os.environ.items() if is_secret_field(name)]
    if verbose:
        print(redact("".join(traceback.format_exception(exc)).rstrip(), secrets), file=sys.stderr)
    hint = "" if verbose else "; run again with --verbose for the traceback"
    print(redact(f"agentv-gate: internal error: {type(exc).__name__}: {exc}", secrets)
          + f" (a bug in agentv-gate, exit {EXIT_INTERNAL}{hint})", file=sys.stderr)


def _tell_github(command: str, exc: GateError) -> None:
    """In GitHub Actions, a command stopped by a configuration error says so where people look.

    Each located problem (eval file, targets.yaml, shard file line) becomes an annotation at its
    file:line, an unlocated error one annotation of its own, and the job summary lists them, so
    the pull request shows what to fix without anyone opening the step's log.
    """
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    from .report.github import md_cell, write_github_problems  # here: keeps `--version` fast

    headline = str(exc).split("\n", 1)[0]
    lead = (f"The `{command}` command stopped (exit {exc.exit_code}, configuration or usage error): "
            f"{md_cell(headline, 1000)}")
    try:
        write_github_problems("configuration error", lead, exc.problems, message=str(exc))
    except GateError as write_error:
        print(f"agentv-gate: {write_error}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, *, freeze_imports: bool = False) -> int:
    args: argparse.Namespace | None = None
    try:
        given = list(sys.argv[1:] if argv is None else argv)
        if given and (unknown := _unknown_command(given[0])):
            print(f"agentv-gate: {unknown}", file=sys.stderr)
            return EXIT_USAGE
        try:
            args = build_parser().parse_args(_with_default_command(given))
            vars(args).pop("_given_once", None)  # _Once's bookkeeping, not an option
        except SystemExit as exc:  # argparse has printed its message (or the help, or the version)
            return EXIT_OK if exc.code in (0, None) else EXIT_USAGE
        if freeze_imports:
            gc.disable()  # see `entry`
            try:
                command = importlib.import_module(COMMANDS[args.command])
            finally:
                gc.enable()
            gc.freeze()
        else:
            command = importlib.import_module(COMMANDS[args.command])
        return int(command.execute(args))
    except GateError as exc:
        # Redacted as the annotations of the same problems are: a problem may quote a value read from a secret.
        print(inert_lines(redact(f"agentv-gate: {exc}")), file=sys.stderr)
        if exc.exit_code == EXIT_USAGE and args is not None:
            _tell_github(args.command, exc)
        return exc.exit_code
    except KeyboardInterrupt:  # before any case ran; `run` reports its own interruptions
        print("agentv-gate: interrupted", file=sys.stderr)
        return EXIT_SIGINT
    except Exception as exc:  # noqa: BLE001 - the one place a bug of ours becomes an exit code
        _report_internal_error(exc, verbose=bool(getattr(args, "verbose", False)))
        return EXIT_INTERNAL


def entry() -> None:
    """The `agentv-gate` process: `main` with the command imported with the collector off and everything
    imported so far then moved out of its sight (`gc.freeze`).

    Those objects live as long as the process anyway; left in view, every collection during the run
    walks them again, and the interpreter's shutdown walked them all once more: about 80 ms at the end
    of a 200-case LLM-judged run, in a tool whose users wait for its exit. The collections during the
    import (each walking the growing heap) cost 2.5% of its instructions (cachegrind) to free about a
    thousand objects of its scratch, which now stay frozen with the rest (tens of KB). Only for the
    process entry: a program calling `main` in-process keeps its own collector as it was."""
    from .transport.reaper import claim_every_child  # every child of this process is the run's

    claim_every_child()
    sys.exit(main(freeze_imports=True))


if __name__ == "__main__":
    entry()
