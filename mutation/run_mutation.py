#!/usr/bin/env python3
"""Mutation testing of the core: would the tests notice a realistic bug planted in this module?

Runs cosmic-ray (PyPI) one module at a time. Each module's mutants run against that module's own
tests only (`MODULES` below), so a module takes minutes, not the whole suite per mutant.
cosmic-ray writes each mutant into the source file itself and runs the test command, so the
tests' real `agentv-gate` subprocesses run the mutant too. It does so in a copy of the project
(`.mutation/<module>/src`, with PYTHONPATH pointing there), never in the working tree.

Which mutants: cosmic-ray's core operators (comparisons, among them the boundary slips `>` <-> `>=`
and `<` <-> `<=`; boolean operators, numbers, `not`, `break`/`continue`, exception types, loops run
zero times, removed decorators, + - * /), our own `slips/` operators (mutation/slip_operators.py:
`min` <-> `max`, `x[0]` <-> `x[-1]`, `x[-N:]` <-> `x[:N]`, the best-of, first-of and tail slips
cosmic-ray does not make), minus
* arithmetic swaps into `**`, `<<`, `>>`, `&`, `|`, `^`, `//`, `%` and comparisons into `is`:
  a dozen replacements per operator that model no slip a person makes, and would multiply the
  run time by five;
* anything inside a type annotation of a module with `from __future__ import annotations`
  (never evaluated, so no test can see it);
* lines marked `# pragma: no mutate`;
* mutants that are not valid Python (cosmic-ray turns `-x,` in a tuple into `-,`): counted as
  skipped after the run, since they fail without any test having to notice.

A survivor is a missing test unless `mutation/equivalent_mutants.txt` lists it with the reason
it cannot change behaviour; listed survivors leave the kill rate's denominator.

    .venv/bin/python mutation/run_mutation.py                       # every module in MODULES
    .venv/bin/python mutation/run_mutation.py agentv_gate/commands/merge.py
    .venv/bin/python mutation/run_mutation.py --list                # the module -> tests map
    .venv/bin/python mutation/run_mutation.py --recheck agentv_gate/commands/merge.py

`--recheck` runs again only the mutants that survived the module's last run, against the tests as
they are now: the loop for adding the missing tests. It refuses when the module's own source
changed since that run (the recorded mutants would no longer match it).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"
EQUIVALENTS = Path(__file__).with_name("equivalent_mutants.txt")
SLIP_OPERATORS = Path(__file__).with_name("slip_operators.py")
GOAL = 0.95

# Each core module and the tests that pin its behaviour. A test that reaches the module only
# through the CLI counts: the mutant is in the file the CLI subprocess imports.
MODULES: dict[str, list[str]] = {
    "agentv_gate/orchestrator.py": [
        "tests/test_orchestrator.py",  # first: in-process and fast, so with -x most mutants end there
        "tests/commands/test_scoring_edges.py", "tests/commands/test_execute.py", "tests/commands/test_shard.py",
        "tests/evaluators/test_assertion_variants.py", "tests/hardening/test_hardening_numbers.py",
        "tests/commands/test_execution_block_cli.py", "tests/commands/test_workspace_hooks_cli.py"],
    # The three in-process files kill every mutant of cases.py that is not a listed equivalent (checked
    # mutant by mutant, 2026-11-26); the two CLI files pin its legacy keys and skip_defaults end to end.
    # The rest of tests/loader pins the suite reader, keys, streaming and secrets, not this module.
    "agentv_gate/loader/cases.py": [
        "tests/loader/test_case_fields.py", "tests/loader/test_loader.py", "tests/loader/test_agentv_219_forms.py",
        "tests/loader/test_legacy_forms.py", "tests/loader/test_skip_defaults.py",
        "tests/loader/test_evaluator_parser.py"],  # where an `assert:` that is not a list is located
    "agentv_gate/loader/evaluator_parser.py": [
        # in-process and fast first: with -x most mutants end there; then the CLI files, cheapest first
        "tests/loader/test_evaluator_parser.py", "tests/loader/test_loader.py", "tests/loader/test_agentv_219_forms.py",
        "tests/evaluators/test_assertion_variants.py", "tests/loader/test_unknown_keys.py",
        "tests/loader/test_skip_defaults.py", "tests/loader/test_legacy_forms.py", "tests/loader/test_env_secrets.py",
        "tests/loader/test_case_files_are_not_suites.py", "tests/loader/test_streaming_loader.py"],
    "agentv_gate/loader/evaluator_checks.py": [
        # the checks split out of the parser: the parser's tests
        "tests/loader/test_evaluator_parser.py", "tests/loader/test_loader.py", "tests/loader/test_agentv_219_forms.py",
        "tests/evaluators/test_assertion_variants.py", "tests/loader/test_unknown_keys.py",
        "tests/loader/test_skip_defaults.py", "tests/loader/test_legacy_forms.py", "tests/loader/test_env_secrets.py",
        "tests/loader/test_case_files_are_not_suites.py", "tests/loader/test_streaming_loader.py"],
    "agentv_gate/evaluators/field_accuracy.py": [
        "tests/evaluators/test_deterministic.py", "tests/evaluators/test_field_accuracy_edges.py"],
    "agentv_gate/evaluators/composite.py": ["tests/evaluators/test_composite.py"],
    "agentv_gate/evaluators/tool_trajectory.py": [
        "tests/evaluators/test_tool_trajectory.py", "tests/targets/test_provider_tool_calls.py"],
    "agentv_gate/evaluators/execution_metrics.py": ["tests/evaluators/test_budget_evaluators.py"],
    "agentv_gate/evaluators/metrics.py": ["tests/evaluators/test_budget_evaluators.py"],
    "agentv_gate/evaluators/token_usage.py": ["tests/evaluators/test_budget_evaluators.py"],
    "agentv_gate/evaluators/latency.py": ["tests/evaluators/test_budget_evaluators.py"],
    "agentv_gate/evaluators/cost.py": ["tests/evaluators/test_budget_evaluators.py"],
    "agentv_gate/evaluators/custom_assertion.py": ["tests/evaluators/test_custom_assertions.py"],
    "agentv_gate/evaluators/code_judge.py": [
        "tests/evaluators/test_code_judge.py", "tests/test_sdk.py", "tests/evaluators/test_target_proxy.py"],
    "agentv_gate/evaluators/llm_judge.py": [
        "tests/evaluators/test_llm_judge.py", "tests/evaluators/test_llm_judge_models.py",
        "tests/commands/test_required_and_rubrics_cli.py"],  # last: rubric judges through the CLI, slow
    "agentv_gate/evaluators/contains.py": [
        "tests/evaluators/test_deterministic.py", "tests/evaluators/test_assertion_variants.py"],
    "agentv_gate/evaluators/equals.py": ["tests/evaluators/test_deterministic.py"],
    "agentv_gate/evaluators/regex.py": ["tests/evaluators/test_deterministic.py"],
    "agentv_gate/base/jscompat.py": ["tests/test_javascript.py", "tests/evaluators/test_deterministic.py"],
    "agentv_gate/evaluators/affix.py": ["tests/evaluators/test_assertion_variants.py", "tests/evaluators/test_deterministic.py"],
    "agentv_gate/evaluators/is_json.py": ["tests/evaluators/test_deterministic.py"],
    "agentv_gate/evaluators/json_extract.py": ["tests/evaluators/test_deterministic.py", "tests/evaluators/test_llm_judge.py"],
    "agentv_gate/report/junit.py": ["tests/report/test_junit.py"],
    "agentv_gate/report/github.py": [
        "tests/report/test_github_report.py", "tests/report/test_github_annotations.py",
        "tests/report/test_github_problems.py"],
    "agentv_gate/report/jsonl.py": [
        "tests/report/test_jsonl.py", "tests/hardening/test_hardening_merge.py", "tests/commands/test_merge.py"],
    "agentv_gate/report/baseline/stats.py": ["tests/report/test_stats.py", "tests/report/test_paired.py"],
    "agentv_gate/report/baseline/sequential.py": ["tests/report/test_sequential.py"],
    "agentv_gate/report/baseline/pooled.py": ["tests/report/test_sequential.py", "tests/report/test_paired.py"],
    "agentv_gate/report/baseline/paired.py": ["tests/report/test_paired.py", "tests/commands/test_verdict_properties.py"],
    "agentv_gate/report/baseline/gate.py": ["tests/commands/test_verdict_properties.py"],
    "agentv_gate/commands/merge.py": [
        "tests/hardening/test_hardening_merge.py", "tests/commands/test_execute.py", "tests/commands/test_merge.py"],
    "agentv_gate/judging/judge_reply.py": [
        "tests/judging/test_judge_reply.py", "tests/evaluators/test_llm_judge.py",
        "tests/evaluators/test_llm_judge_models.py"],
    "agentv_gate/transport/http_policy.py": [
        "tests/transport/test_http.py", "tests/transport/test_http_policy.py", "tests/transport/test_http_call.py",
        "tests/transport/test_http_rate_limits.py"],
    # Added since the list above was made (issue 38): in-process edge tests first, the CLI files after.
    "agentv_gate/execution/stop.py": ["tests/execution/test_stop_policies.py", "tests/commands/test_boundaries_cli.py"],
    "agentv_gate/base/trial_strategies.py": ["tests/execution/test_trials.py"],
    "agentv_gate/execution/hooks.py": [
        "tests/execution/test_hook_output.py", "tests/commands/test_workspace_hooks_cli.py",
        "tests/commands/test_workspace_file_changes_cli.py"],
    "agentv_gate/execution/file_changes.py": ["tests/commands/test_workspace_file_changes_cli.py"],
    "agentv_gate/judging/rubric_protocol.py": [
        "tests/judging/test_rubric_edges.py", "tests/judging/test_rubrics.py",
        "tests/commands/test_required_and_rubrics_cli.py"],
    "agentv_gate/report/html.py": ["tests/report/test_html_verdict.py", "tests/report/test_html.py"],
    "agentv_gate/report/live.py": ["tests/report/test_live_edges.py", "tests/report/test_live.py"],
    "agentv_gate/report/baseline/compare.py": [
        "tests/report/test_baseline_limits.py", "tests/report/test_baseline.py", "tests/commands/test_compare_cli.py"],
    "agentv_gate/report/baseline/render.py": [
        "tests/report/test_baseline_limits.py", "tests/report/test_baseline.py", "tests/commands/test_compare_cli.py"],
    "agentv_gate/evaluators/target_proxy.py": [
        "tests/evaluators/test_target_proxy_edges.py", "tests/evaluators/test_target_proxy.py"],
    "agentv_gate/redaction.py": ["tests/test_redaction_edges.py", "tests/test_redaction.py"],
    "agentv_gate/loader/assertions.py": ["tests/evaluators/test_custom_assertions.py"],
}

EXCLUDED_OPERATORS = [
    r"core/ReplaceBinaryOperator_\w+_(Pow|LShift|RShift|BitOr|BitAnd|BitXor|FloorDiv|Mod)$",
    r"core/ReplaceComparisonOperator_(Eq|NotEq|Lt|LtE|Gt|GtE)_(Is|IsNot)$",
]
OPERATORS_KEPT_NOTE = ("comparisons (> <-> >=, < <-> <=, ...), and/or, not, numbers, True/False, break/continue, "
                       "exceptions, loops, decorators, + - * /; slips: min <-> max, [0] <-> [-1], [-N:] <-> [:N]")


@dataclass
class Equivalent:
    module: str
    original: str
    mutated: str
    why: str
    used: bool = False


@dataclass
class Outcome:
    module: str
    mutants: int = 0
    killed: int = 0
    skipped: int = 0
    not_sampled: int = 0
    equivalent: int = 0
    survivors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        judged = self.killed + len(self.survivors)
        return self.killed / judged if judged else 1.0


def load_equivalents(path: Path = EQUIVALENTS) -> list[Equivalent]:
    """Blocks of `module`, `- original line`, `+ mutated line`, `why: reason`, separated by blank lines."""
    found: list[Equivalent] = []
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    for block in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        if not lines:
            continue
        fields = {"-": "", "+": "", "why:": ""}
        for line in lines[1:]:
            for prefix in fields:
                if line.startswith(prefix):
                    fields[prefix] = line[len(prefix):].strip()
        if not (fields["-"] and fields["+"] and fields["why:"]):
            raise SystemExit(f"{path}: every entry needs '- original', '+ mutated' and 'why:' lines:\n{block}")
        found.append(Equivalent(lines[0], fields["-"], fields["+"], fields["why:"]))
    return found


def changed_lines(diff: str) -> tuple[str, str]:
    """The original and mutated line of a one-line mutant's diff, stripped."""
    minus = [line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    plus = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return " / ".join(minus), " / ".join(plus)


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions, parso-style (line 1-based, column in characters), of every annotation
    when the module postpones their evaluation; none otherwise."""
    tree = ast.parse(source)
    postponed = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                    and any(alias.name == "annotations" for alias in node.names) for node in tree.body)
    if not postponed:
        return []
    lines = source.splitlines()

    def char_col(line: int, byte_col: int) -> int:
        return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    nodes: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                         *(a for a in (node.args.vararg, node.args.kwarg) if a is not None)]
            nodes += [a.annotation for a in arguments if a.annotation is not None]
            if node.returns is not None:
                nodes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            nodes.append(node.annotation)
    return [((n.lineno, char_col(n.lineno, n.col_offset)),
             (n.end_lineno or n.lineno, char_col(n.end_lineno or n.lineno, n.end_col_offset or 0))) for n in nodes]


def pragma_lines(source: str) -> set[int]:
    return {number for number, line in enumerate(source.splitlines(), start=1) if "pragma: no mutate" in line}


def copy_project(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".agentv-gate*")
    for name in ("agentv_gate", "tests", "examples"):  # tests/test_sdk.py runs the example judges
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")


def install_slip_operators(dest: Path) -> Path:
    """Make mutation/slip_operators.py a cosmic-ray operator provider named `slips`, for the processes
    that get `dest` on their PYTHONPATH: cosmic-ray finds providers by entry point, and an entry point
    is read from a `.dist-info` folder on the path (nothing is installed into the virtualenv)."""
    if dest.exists():
        shutil.rmtree(dest)
    info = dest / "agentv_gate_slip_operators-1.0.dist-info"
    info.mkdir(parents=True)
    shutil.copy2(SLIP_OPERATORS, dest / SLIP_OPERATORS.name)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agentv-gate-slip-operators\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[cosmic_ray.operator_providers]\nslips = slip_operators:OperatorProvider\n",
                                           encoding="utf-8")
    return dest


def write_config(path: Path, module: str, test_command: str, timeout: float) -> None:
    excluded = ", ".join(f"'{pattern}'" for pattern in EXCLUDED_OPERATORS)
    path.write_text(f"""[cosmic-ray]
module-path = "{module}"
timeout = {timeout:.0f}
excluded-modules = []
test-command = "{test_command}"

[cosmic-ray.distributor]
name = "local"

[cosmic-ray.filters.operators-filter]
exclude-operators = [{excluded}]
""", encoding="utf-8")


NOT_SAMPLED = "not in the sample"


def in_sample(key: str, sample: float) -> bool:
    """A fixed share of the mutants, the same ones on every run (chosen by a hash of `mutant_key`)."""
    return sample >= 1 or int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 2**32 < sample


def mutant_key(mutation: Any) -> str:
    """What names a mutant from one run to the next while its module is unchanged: the operator and
    which of its occurrences. Not cosmic-ray's job id, a new random one at every `init`."""
    return f"{mutation.operator_name}#{mutation.occurrence}"


def skip_unjudgeable(session: Path, source: str, sample: float = 1.0) -> None:
    """Mark excluded operators, annotation-only mutants and pragma lines as skipped, and with
    `sample` below 1 every mutant outside the sample."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    spans = annotation_spans(source)
    pragmas = pragma_lines(source)
    excluded = re.compile("|".join(f"(?:{p})" for p in EXCLUDED_OPERATORS))
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            for mutation in item.mutations:
                start, end = tuple(mutation.start_pos), tuple(mutation.end_pos)
                reason = ("excluded operator" if excluded.match(mutation.operator_name)
                          else "type annotation" if any(a <= start and end <= b for a, b in spans)
                          else "pragma: no mutate" if start[0] in pragmas
                          else NOT_SAMPLED if not in_sample(mutant_key(mutation), sample) else None)
                if reason:
                    db.set_result(item.job_id, WorkResult(output=reason, worker_outcome=WorkerOutcome.SKIPPED))
                    break


def survivors_pending(session: Path, listed: Sequence[Equivalent] = (), module: str = "") -> int:
    """Forget the survived results, so `cosmic-ray exec` runs those mutants again; returns how many.
    A survivor `listed` as an equivalent mutant of `module` is kept: the tally counts it as equivalent
    whatever a test run says, so running it again (through every test file) only costs time.

    cosmic-ray has no call to drop one result, so this is plain SQL on its session file."""
    import sqlite3

    known = {(e.original, e.mutated) for e in listed if e.module == module}
    with sqlite3.connect(session) as db:
        rows = db.execute("SELECT job_id, diff FROM work_results WHERE worker_outcome = 'NORMAL' "
                          "AND test_outcome = 'SURVIVED'").fetchall()
        again = [(job,) for job, diff in rows if changed_lines(diff or "") not in known]
        db.executemany("DELETE FROM work_results WHERE job_id = ?", again)
    return len(again)


def run_module(module: str, tests: list[str], python: str, equivalents: list[Equivalent],
               recheck: bool = False, sample: float = 1.0) -> Outcome:
    started = time.monotonic()
    slug = module.removeprefix("agentv_gate/").removesuffix(".py").replace("/", ".")
    home = WORK / slug
    src = home / "src"
    session = home / "session.sqlite"
    if recheck:
        if not session.exists():
            raise SystemExit(f"{module}: no earlier run to recheck (run it without --recheck first)")
        if (src / module).read_bytes() != (ROOT / module).read_bytes():
            raise SystemExit(f"{module}: the module changed since its last run; run it again without --recheck")
    home.mkdir(parents=True, exist_ok=True)
    copy_project(src)
    if not recheck:
        session.unlink(missing_ok=True)
    plugin = install_slip_operators(home / "plugin")  # per module: two modules may run at once
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(plugin)]), "PYTHONDONTWRITEBYTECODE": "1"}
    env = {k: v for k, v in env.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    pytest = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]

    # The clean run must pass, and its time sets the timeout: a mutant that loops is killed by it.
    clean_start = time.monotonic()
    clean = subprocess.run(pytest, cwd=src, env=env, capture_output=True, text=True)
    if clean.returncode != 0:
        raise SystemExit(f"{module}: its tests fail without any mutant:\n{clean.stdout[-3000:]}{clean.stderr[-2000:]}")
    timeout = max(30.0, 5 * (time.monotonic() - clean_start))

    config = home / "cosmic-ray.toml"
    write_config(config, module, shlex.join(pytest), timeout)
    cosmic_ray = str(Path(python).with_name("cosmic-ray"))
    if recheck:
        print(f"  rechecking {survivors_pending(session, equivalents, module)} survivors", flush=True)
    else:
        subprocess.run([cosmic_ray, "init", str(config), str(session)], cwd=src, env=env, check=True,
                       capture_output=True)
        skip_unjudgeable(session, (src / module).read_text(encoding="utf-8"), sample)
    subprocess.run([cosmic_ray, "exec", str(config), str(session)], cwd=src, env=env, check=True, capture_output=True)
    if (src / module).read_bytes() != (ROOT / module).read_bytes():
        raise SystemExit(f"{module}: the copy was left mutated; results not trusted")
    return tally(module, session, equivalents, home, time.monotonic() - started)


def _not_python(output: str, module: str) -> bool:
    """Whether the tests failed only because the mutated module no longer parses."""
    return "SyntaxError" in output and f"{module}\", line" in output


def tally(module: str, session: Path, equivalents: list[Equivalent], home: Path, seconds: float) -> Outcome:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    outcome = Outcome(module, seconds=seconds)
    report: list[str] = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            outcome.mutants += 1
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                if result.output == NOT_SAMPLED:
                    outcome.not_sampled += 1
                else:
                    outcome.skipped += 1
                continue
            if result.test_outcome != TestOutcome.SURVIVED:
                if _not_python(result.output or "", module):
                    outcome.skipped += 1  # cosmic-ray wrote code that does not parse: no test was needed
                else:
                    outcome.killed += 1  # a failing test, a timeout, or a mutant that cannot even import
                continue
            original, mutated = changed_lines(result.diff or "")
            known = next((e for e in equivalents if e.module == module and e.original == original
                          and e.mutated == mutated), None)
            mutation = item.mutations[0]
            where = f"{module}:{mutation.start_pos[0]} {mutation.operator_name}"
            if known is not None:
                known.used = True
                outcome.equivalent += 1
                report.append(f"equivalent {where}\n  - {original}\n  + {mutated}\n  why: {known.why}\n")
            else:
                outcome.survivors.append(f"{where}\n  - {original}\n  + {mutated}")
                report.append(f"SURVIVED {where}\n{result.diff}\n")
    (home / "survivors.txt").write_text("\n".join(report), encoding="utf-8")
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: every module in MODULES)")
    parser.add_argument("--list", action="store_true", help="print the module -> tests map and exit")
    parser.add_argument("--sample", type=float, default=100.0, metavar="PERCENT",
                        help="run only this share of each module's mutants, the same ones every time "
                             "(default 100: all); the kill rate of a sample estimates the module's")
    parser.add_argument("--recheck", action="store_true",
                        help="run again only the mutants that survived each module's last run")
    args = parser.parse_args()
    if args.list:
        for module, tests in MODULES.items():
            print(f"{module}: {' '.join(tests)}")
        return 0
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"not in MODULES: {', '.join(unknown)} (see --list)")
    equivalents = load_equivalents()
    outcomes = []
    for module in args.modules or list(MODULES):
        print(f"mutating {module} against {' '.join(MODULES[module])} ...", flush=True)
        outcomes.append(run_module(module, MODULES[module], sys.executable, equivalents, args.recheck,
                                   args.sample / 100))
        print(line(outcomes[-1]), flush=True)
    print(f"\noperators: {OPERATORS_KEPT_NOTE}\n")
    print(f"{'module':45} {'mutants':>7} {'skipped':>7} {'unsampled':>9} {'killed':>6} {'equiv':>5} {'survived':>8} "
          f"{'kill rate':>9} {'min':>5}")
    for o in outcomes:
        print(line(o))
    for o in outcomes:
        for survivor in o.survivors:
            print(f"\nSURVIVED {survivor}")
    stale = [e for e in equivalents if not e.used and e.module in {o.module for o in outcomes}]
    for e in stale:
        print(f"\nnote: listed as equivalent but not seen (fixed, or the line changed): {e.module}\n  - {e.original}")
    print(f"\nper-module details (diffs): {WORK}/<module>/survivors.txt")
    return 0 if all(o.rate >= GOAL for o in outcomes) else 1


def line(o: Outcome) -> str:
    return (f"{o.module:45} {o.mutants:7} {o.skipped:7} {o.not_sampled:9} {o.killed:6} {o.equivalent:5} {len(o.survivors):8} "
            f"{o.rate:9.1%} {o.seconds / 60:5.1f}")


if __name__ == "__main__":
    sys.exit(main())
