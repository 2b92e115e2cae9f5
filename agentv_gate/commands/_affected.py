"""`run --affected-since BASE.jsonl`: run what the change can affect, carry the rest over from the base.

A case runs when its `case_digest` differs from its base row's (its input, files, evaluators, judge
scripts and prompts, workspace template files and hook scripts, threshold or trials changed), when the
base has no result for it (no row, or a row of a case it never judged: not started, left out), and
every case runs when a file of the agent changed since the commit the base judged: the `agent_paths:`
globs of `.agentv/gate.yaml`, or by default every file outside the eval files' folders (so a
repository that configures nothing runs everything when its code changes). The rows
of the other cases are carried over as they were, marked `carried: true`: a carried failure stays a
failure, a carried error an error, so a carry-over never turns into a pass.

Whatever makes the comparison unsound runs everything, saying why: a base without digests, of other
eval files, of another `--trials`, whose commit is unknown or not in this checkout.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..base.files import project_root
from ..errors import TargetsConfigError, UsageError
from ..loader import CaseRef, with_dependencies
from ..loader.globs import matches_any
from ..models import CaseResult
from ..report.text import inert_log_text, one_line
from ..targets.resolver import targets_files
from ._previous import read_previous
from ._select import Rerun, run_digest


@dataclass(frozen=True)
class AgentChanges:
    """The agent's files changed since a commit; `unknown` says why that could not be told (then it
    counts as changed: an unknown change must not carry an old answer over)."""

    files: tuple[str, ...] = ()
    unknown: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.files) or self.unknown is not None

    def describe(self) -> str:
        if self.unknown is not None:
            return self.unknown
        shown = ", ".join(self.files[:3]) + (f" and {len(self.files) - 3} more" if len(self.files) > 3 else "")
        return f"{len(self.files)} file(s) of the agent changed ({shown})"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def agent_changes(commit: str | None, agent_paths: Sequence[str] | None, eval_files: Sequence[Path],
                  since: str = "the base", ignore: Sequence[Path] = (), targets: Sequence[Path] = ()) -> AgentChanges:
    """What changed since `commit` (committed, staged, in the working tree, or new and not ignored) among
    the agent's files: those matching `agent_paths`, or (None) every file outside the eval files'
    folders (the repository's top folder is no eval folder: there only the eval files themselves are)
    and outside `ignore` (the gate's own inputs: the base results, a recording kept in the repository);
    and, whatever `agent_paths` say and wherever they are, the `targets` files the run reads (another
    model or command is another agent; no case digest holds them)."""
    if not commit:
        return AgentChanges(unknown=f"{since} records no commit, so what changed since cannot be told")
    root = project_root(Path.cwd())
    top = _git(root, "rev-parse", "--show-toplevel")
    resolved = _git(root, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if top is None or not resolved:
        return AgentChanges(unknown=f"{since}'s commit {one_line(commit)[:40]} is not in this checkout (a shallow "
                            "clone? check out with fetch-depth: 0)")
    base = resolved.strip()
    diffed = _git(root, "diff", "--name-only", "-z", base)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", ":/")
    if diffed is None or untracked is None:
        return AgentChanges(unknown=f"git could not diff against {base[:12]}")
    toplevel = Path(top.strip()).resolve()
    changed = sorted({name for name in (diffed + untracked).split("\0") if name})
    agent = {name for name in (_relative(path, toplevel) for path in targets) if name}
    if agent_paths is not None:
        return AgentChanges(tuple(name for name in changed if name in agent or matches_any(name, agent_paths)))
    evals = {_relative(file, toplevel) for file in eval_files}
    folders = {str(Path(name).parent) for name in evals if name and Path(name).parent != Path(".")}
    own = {name for name in (_relative(path, toplevel) for path in ignore) if name}
    return AgentChanges(tuple(name for name in changed if name in agent or name not in evals | own and not any(
        name.startswith(folder + "/") for folder in folders | own)))


def _relative(file: Path, top: Path) -> str:
    try:
        return Path(file).resolve().relative_to(top).as_posix()
    except ValueError:
        return ""


def base_commit(args: argparse.Namespace, rows: Sequence[CaseResult]) -> tuple[str | None, str | None]:
    """(the commit the base judged, why none can be taken): `--base-ref`, else the one its rows record."""
    if getattr(args, "base_ref", None):
        return args.base_ref, None
    commits = {row.commit for row in rows}
    if len(commits) > 1:
        return None, f"its rows record {len(commits)} different commits (a merge of runs of several commits)"
    commit = next(iter(commits), None)
    return commit, None if commit else "its rows record no commit"


def _label(commit: str | None, ref: str | None) -> str:
    short = (commit or "")[:7]
    return f"{ref}@{short}" if ref and short else short or (ref or "the base")


def load_affected(args: argparse.Namespace, refs: Sequence[CaseRef], agent_paths: Sequence[str] | None,
                  eval_files: Sequence[Path]) -> tuple[Rerun, list[CaseRef]] | None:
    """The base rows to carry over and the cases of `refs` (already filtered) that run; None without the flag."""
    path = getattr(args, "affected_since", None)
    if path is None:
        return None
    if getattr(args, "retry_errors", None) or getattr(args, "rerun_failed", None):
        raise UsageError("--affected-since does not combine with --retry-errors or --rerun-failed")
    if getattr(args, "record", None) is not None:
        raise UsageError("--affected-since with --record: a recording of part of the cases would leave the rest "
                         "without answers; record every case")
    rows = read_previous(path, f"--affected-since {path} holds no results")
    rerun = Rerun(Path(path), rows, set())
    everything = _why_everything(args, refs, rows, agent_paths, eval_files)
    if everything is not None:
        _say(f"--affected-since {path}: running every case: {everything}")
        return rerun, list(refs)
    now = {(ref.suite, ref.id): run_digest(args, ref) for ref in refs}
    base: dict[tuple[str, str], set[str | None]] = {}
    for row in rows:
        # A row the base wrote for a case it never judged (not started after --max-failures or a spent
        # budget, left out by --skip-missing-env, a dependency failed, no recorded answer) is no result:
        # the case runs, as a new one would, rather than carry "not run" into a verdict of its own.
        digest = None if row.failure_reason_code else row.case_digest
        base.setdefault((row.suite, row.eval_id), set()).add(digest)
    changed = [ref for ref in refs if base.get((ref.suite, ref.id), {None}) != {now[(ref.suite, ref.id)]}]
    # an affected case runs after its dependencies, as in the base's run: one only carried would count as failed
    chosen = with_dependencies(changed, refs)
    running = {(ref.suite, ref.id) for ref in chosen}
    for row in rows:
        if (row.suite, row.eval_id) in now and (row.suite, row.eval_id) not in running:
            rerun.kept.append(row.model_copy(update={"carried": True}))
    commit, _ = base_commit(args, rows)
    new = sum(1 for ref in changed if (ref.suite, ref.id) not in base)
    needed = f", {len(chosen) - len(changed)} they depend on" if len(chosen) > len(changed) else ""
    _say(f"--affected-since {path}: {len(chosen)} of {len(refs)} case(s) affected ({len(changed) - new} changed, "
         f"{new} new{needed}); {len({(r.suite, r.eval_id) for r in rerun.kept})} carried from {_label(commit, None)}")
    return rerun, chosen


def _why_everything(args: argparse.Namespace, refs: Sequence[CaseRef], rows: Sequence[CaseResult],
                    agent_paths: Sequence[str] | None, eval_files: Sequence[Path]) -> str | None:
    """Why the base cannot tell which cases are affected, or None when it can."""
    keys = {(ref.suite, ref.id) for ref in refs}
    shared = [row for row in rows if (row.suite, row.eval_id) in keys]
    if not shared:
        return "the base shares no case with these eval files (a base of other eval files?)"
    if any(row.case_digest is None for row in shared):
        return "the base's rows have no case_digest (written by an older agentv-gate)"
    trials = _base_trials(args, refs, shared)
    if trials is not None:
        return trials
    commit, none = base_commit(args, rows)
    if none is not None:
        return f"the agent's files cannot be compared: {none} (give --base-ref)"
    changes = agent_changes(commit, agent_paths, eval_files, ignore=[Path(args.affected_since)],
                            targets=_targets_files(args, refs))
    if changes.changed:
        where = "agent_paths in .agentv/gate.yaml" if agent_paths is not None else \
            "outside the eval files' folders; set agent_paths in .agentv/gate.yaml to narrow it"
        return f"{changes.describe()} since {_label(commit, None)} ({where})"
    return None


def _targets_files(args: argparse.Namespace, refs: Sequence[CaseRef]) -> list[Path]:
    """The targets files the run reads (none when they cannot be told: opening the targets says why)."""
    try:
        return list(targets_files(getattr(args, "targets", None), refs))
    except TargetsConfigError:
        return []


def _base_trials(args: argparse.Namespace, refs: Sequence[CaseRef], shared: Sequence[CaseResult]) -> str | None:
    """The base ran another `--trials`: a digest of some case matches under that count, not under this run's."""
    by_key = {(ref.suite, ref.id): ref for ref in refs}
    for row in shared:
        ref = by_key[(row.suite, row.eval_id)]
        if row.case_digest == run_digest(args, ref):
            continue
        for count in {len(row.trials or []), None} - {getattr(args, "trials", None)}:
            other = argparse.Namespace(**{**vars(args), "trials": count})
            if count != 0 and row.case_digest == run_digest(other, ref):
                return (f"the base ran --trials {count if count is not None else 'unset'}, this run "
                        f"--trials {getattr(args, 'trials', None) or 'unset'}")
    return None


def _say(text: str) -> None:
    print(inert_log_text(f"agentv-gate: {text}"), file=sys.stderr)


__all__ = ["AgentChanges", "agent_changes", "base_commit", "load_affected"]
