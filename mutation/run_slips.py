#!/usr/bin/env python3
"""Hand-planted slips: would the tests notice the small bug a developer writes?

cosmic-ray (`run_mutation.py`) plants every mechanical change of an operator or a number; a person
slips differently: a default changed, a redaction dropped, an escape forgotten, a `continue` left
out, the first of a list taken for the best. Each file in `mutation/slips/` is one such slip, written
by hand as a patch of one small diff, with a header saying what it is and which tests should
catch it:

    Slip: pass_at_k keeps the last trial's score, not the best one
    Area: trials
    Tests: tests/execution/test_trials.py tests/commands/test_execution_block_cli.py
    <the diff, as `git diff` writes it>

The slips are applied one at a time to a copy of the project (`.mutation/slips/src`, on the tests'
PYTHONPATH, so the CLI processes the tests start run the slip too), the named tests run with `-x`,
and the slip is reverted. A slip is caught when the tests fail with it. An `Equivalent: reason` line
marks a slip that cannot change behaviour; it leaves the rate's denominator, as an equivalent mutant
does. A slip that no longer applies (the code moved on) is reported and not counted.

    .venv/bin/python mutation/run_slips.py                   # every slip, then the catch rate
    .venv/bin/python mutation/run_slips.py 07-trials-last    # the slips whose file name contains it
    .venv/bin/python mutation/run_slips.py --list            # each slip's area, tests and summary

Before the slips, each distinct set of tests runs once on the clean copy: a test that fails anyway
would count every slip as caught. It exits 1 when the catch rate is under the goal, 95%.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLIPS = Path(__file__).with_name("slips")
WORK = ROOT / ".mutation" / "slips"
GOAL = 0.95


@dataclass(frozen=True)
class Slip:
    path: Path
    summary: str
    area: str
    tests: tuple[str, ...]
    equivalent: str | None

    @property
    def name(self) -> str:
        return self.path.stem


def read_slip(path: Path) -> Slip:
    """A slip file's header (the lines before its diff)."""
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(("diff --git", "--- ")):
            break
        key, sep, value = line.partition(":")
        if sep and key in ("Slip", "Area", "Tests", "Equivalent"):
            fields[key] = value.strip()
    missing = [key for key in ("Slip", "Area", "Tests") if not fields.get(key)]
    if missing:
        raise SystemExit(f"{path}: the header needs {', '.join(missing)} lines")
    return Slip(path, fields["Slip"], fields["Area"], tuple(fields["Tests"].split()), fields.get("Equivalent"))


def all_slips(only: list[str] | None = None) -> list[Slip]:
    slips = [read_slip(p) for p in sorted(SLIPS.glob("*.patch"))]
    return [s for s in slips if not only or any(o in s.name for o in only)]


def _copy_project(dest: Path) -> None:
    spec = importlib.util.spec_from_file_location("run_mutation", Path(__file__).with_name("run_mutation.py"))
    assert spec is not None and spec.loader is not None
    run_mutation = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_mutation", run_mutation)
    spec.loader.exec_module(run_mutation)
    run_mutation.copy_project(dest)


def git_apply(src: Path, patch: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git apply` in the copy, as `patch` would. The copy sits inside the project's repository, and git
    run there would read the patch's paths from the repository's root and skip them all (exit 0):
    GIT_CEILING_DIRECTORIES keeps git from finding the repository."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(src.parent)}
    return subprocess.run(["git", "apply", *args, str(patch)], cwd=src, env=env, capture_output=True, text=True)


def patched_files(src: Path, patch: Path) -> dict[Path, bytes]:
    """The files `patch` changes in the copy, and their bytes now."""
    names = git_apply(src, patch, "--numstat").stdout.splitlines()
    return {src / line.split("\t")[-1]: (src / line.split("\t")[-1]).read_bytes() for line in names if line}


def run_tests(src: Path, tests: tuple[str, ...]) -> tuple[bool, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    env = {k: v for k, v in env.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header",
                           *tests], cwd=src, env=env, capture_output=True, text=True)
    return done.returncode == 0, done.stdout[-2500:] + done.stderr[-1000:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="run only the slips whose file name contains one of these")
    parser.add_argument("--list", action="store_true", help="print each slip's area, tests and summary and exit")
    parser.add_argument("--without", nargs="+", default=[], metavar="TEST_FILE",
                        help="leave these test files out of every slip's tests (the figure before they were written)")
    parser.add_argument("--no-clean-check", action="store_true",
                        help="skip the clean run of each set of tests (when they were just seen passing)")
    args = parser.parse_args()
    slips = [s if not args.without else replace(s, tests=tuple(t for t in s.tests if t not in args.without))
             for s in all_slips(args.only)]
    if not slips:
        parser.error("no slip matches")
    if args.list:
        for s in slips:
            print(f"{s.name:45} {s.area:18} {s.summary}\n{'':45} tests: {' '.join(s.tests)}")
        return 0
    src = WORK / "src"
    _copy_project(src)
    if not args.no_clean_check:
        for tests in sorted({s.tests for s in slips}):
            ok, output = run_tests(src, tests)
            if not ok:
                raise SystemExit(f"these tests fail without any slip: {' '.join(tests)}\n{output}")
    caught: list[Slip] = []
    missed: list[Slip] = []
    equivalent: list[Slip] = []
    stale: list[Slip] = []
    for slip in slips:
        started = time.monotonic()
        before = patched_files(src, slip.path)
        applied = git_apply(src, slip.path)
        if applied.returncode == 0 and (not before or patched_files(src, slip.path) == before):
            raise SystemExit(f"{slip.name}: git apply changed nothing in {src}")
        if applied.returncode != 0:
            stale.append(slip)
            print(f"{'DOES NOT APPLY':14} {slip.name}: {applied.stderr.strip()}", flush=True)
            continue
        try:
            passed, output = run_tests(src, slip.tests)
        finally:
            reverted = git_apply(src, slip.path, "-R")
            if reverted.returncode != 0 or patched_files(src, slip.path) != before:
                raise SystemExit(f"{slip.name}: could not revert it in {src}: {reverted.stderr}")
        verdict = "equivalent" if slip.equivalent else "MISSED" if passed else "caught"
        (equivalent if slip.equivalent else missed if passed else caught).append(slip)
        print(f"{verdict:14} {slip.name:45} {slip.area:18} {time.monotonic() - started:5.1f}s", flush=True)
        if slip.equivalent and not passed:
            print(f"{'':14} note: listed as equivalent, but the tests fail with it:\n{output}")
    judged = len(caught) + len(missed)
    rate = len(caught) / judged if judged else 1.0
    print(f"\n{len(caught)} / {judged} slips caught ({rate:.1%}); {len(equivalent)} equivalent, "
          f"{len(stale)} no longer apply")
    for slip in missed:
        print(f"MISSED {slip.name}: {slip.summary} ({' '.join(slip.tests)})")
    shutil.rmtree(src, ignore_errors=True)
    return 0 if rate >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
