"""What a report says of the run itself: which commit, when, which agentv-gate, how long.

A reviewer reading report.html from a CI artifact a week later needs to know what it judged: the
commit (GitHub's `GITHUB_SHA`, else the checkout's HEAD), when the run started, the agentv-gate
version, and the wall time. The targets are read from the rows themselves.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..models import utc_now_iso

_SHA = re.compile(r"[0-9a-f]{7,64}")


def current_commit(environ: Mapping[str, str] = os.environ) -> str | None:
    """The commit under test: `GITHUB_SHA` in Actions, else `git rev-parse HEAD`; None outside a repository.

    Only a hexadecimal object name is kept: the value ends up in report.html and a pull-request comment."""
    sha = environ.get("GITHUB_SHA", "").strip().lower()
    if not sha:
        try:
            done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                                  stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        sha = done.stdout.strip().lower() if done.returncode == 0 else ""
    return sha if _SHA.fullmatch(sha) else None


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
    judges: tuple[str, ...] | None = None
    """The judge targets the run's LLM judges called, from the rows' `judge_usage`; None when not known."""

    @classmethod
    def for_run(cls, started_at: str, wall_seconds: float, commit: str | None) -> RunInfo:
        return cls(started_at=started_at, wall_seconds=wall_seconds, commit=commit)


__all__ = ["RunInfo", "current_commit"]
