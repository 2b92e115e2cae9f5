"""What every report says of a run that did not judge every case afresh: carried rows, replayed answers.

`--affected-since` carries unaffected cases over from the base, and `--replay` gives the agent's
answers from a recording: a reader must see both at once, in the same words in the console, the job
summary, report.html and the pull-request comment ("23 of 410 cases run; 387 carried from
main@abc1234"), never a green that hides how little ran.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..targets.recording import AGENT_CHANGED, NOT_RECORDED
from .rows import ReportedCase


def carried_from(row: ReportedCase) -> str | None:
    """A `ReportRow`'s `carried_from`, or a results row's `carried` with its commit."""
    found = getattr(row, "carried_from", None)
    if found is None and getattr(row, "carried", None):
        found = (getattr(row, "commit", None) or "")[:7]
    return found if isinstance(found, str) else None


def _label(commits: set[str], ref: str | None) -> str:
    if len(commits) != 1 or not next(iter(commits)):
        return f"{ref} (base)" if ref else "the base"
    commit = next(iter(commits))
    return f"{ref}@{commit}" if ref else commit


def selection_lines(rows: Sequence[ReportedCase], environ: Mapping[str, str] = os.environ) -> list[str]:
    """One line for carried rows, one for a replay; none for a run that judged every case afresh."""
    lines = []
    carried = [r for r in rows if carried_from(r) is not None]
    if carried:
        cases = {(r.suite, r.eval_id) for r in rows}
        kept = {(r.suite, r.eval_id) for r in carried}
        where = _label({carried_from(r) or "" for r in carried}, environ.get("GITHUB_BASE_REF") or None)
        lines.append(f"{len(cases - kept)} of {len(cases)} cases run; {len(kept)} carried from {where}")
    replayed = {str(getattr(r, "replayed", "")) for r in rows} - {"", "None"}
    if replayed:
        missing = [r for r in rows if r.failure_reason_code == NOT_RECORDED]
        changed = "yes" if any(AGENT_CHANGED in (r.error or "") for r in missing) else "no"
        lines.append(f"replayed: agent answers from {', '.join(sorted(replayed))}; agent code changed? {changed}; "
                     f"cases needing new answers: {len({(r.suite, r.eval_id) for r in missing})} (not run)")
    return lines


__all__ = ["carried_from", "selection_lines"]
