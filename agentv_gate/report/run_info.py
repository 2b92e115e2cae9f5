"""What a report says of the run itself: which commit, when, which agentv-gate, how long.

A reviewer reading report.html from a CI artifact a week later needs to know what it judged: the
commit (GitHub's `GITHUB_SHA`, else the checkout's HEAD), when the run started, the agentv-gate
version, and the wall time. The targets are read from the rows themselves.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..models import utc_now_iso


def current_commit(environ: Mapping[str, str] = os.environ) -> str | None:
    """The commit under test: `GITHUB_SHA` in Actions, else `git rev-parse HEAD`; None outside a repository."""
    sha = environ.get("GITHUB_SHA", "").strip()
    if sha:
        return sha
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _version() -> str:
    from .. import __version__

    return __version__


@dataclass(frozen=True)
class RunInfo:
    """The run a report is of. `wall_seconds` is None for a `merge` (its shards ran elsewhere)."""

    started_at: str = field(default_factory=utc_now_iso)
    wall_seconds: float | None = None
    commit: str | None = None
    version: str = field(default_factory=_version)
    merged_from: int | None = None
    """For a `merge`: how many results files it joined."""

    @classmethod
    def for_run(cls, started_at: str, wall_seconds: float) -> RunInfo:
        return cls(started_at=started_at, wall_seconds=wall_seconds, commit=current_commit())


__all__ = ["RunInfo", "current_commit"]
