"""What the agent changed in its workspace, as AgentV 2.19 tells its evaluators (`fileChanges`).

When a suite's workspace is made (execution/hooks.py) and its `before_all` has run, AgentV makes it
a git repository and commits everything in it as a baseline; after each case's target answers, it
stages everything (inside nested repositories too) and gives the evaluators `git diff BASELINE
--submodule=diff`: a code judge's `file_changes`, a prompt's `{{file_changes}}`, and a
`[[ ## file_changes ## ]]` section in the default and rubric prompts. The baseline is the suite's,
so a case sees what earlier cases and its `before_each` changed, unless a hook resets the folder.

Best effort, as in AgentV: without git, or when a git command fails, there is no baseline or no
diff, and the case runs as it would without a workspace diff.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_GIT_SECONDS = 60.0
_COMMIT = ["-c", "user.email=agentv@localhost", "-c", "user.name=agentv", "-c", "commit.gpgsign=false",
           "commit", "-q", "--no-verify", "--allow-empty", "-m", "agentv-baseline"]


def _git(workspace: Path, *args: str) -> str | None:
    """`git ARGS` in `workspace`, its stdout, or None when it failed. Never a repository around it:
    run as a pre-commit hook, agentv-gate inherits git's GIT_DIR, GIT_INDEX_FILE and the like,
    which would point these commands at the team's own repository, so every GIT_* variable is left out."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    try:
        done = subprocess.run(["git", *args], cwd=workspace, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              encoding="utf-8", errors="replace", timeout=_GIT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def initialize_baseline(workspace: Path) -> str | None:
    """Make `workspace` a git repository whose one commit holds what it holds now; that commit's id."""
    for args in (["init", "-q"], ["add", "-A"], _COMMIT):
        if _git(workspace, *args) is None:
            return None
    head = _git(workspace, "rev-parse", "HEAD")
    return head.strip() if head else None


def capture_file_changes(workspace: Path, baseline: str) -> str | None:
    """The unified diff of `workspace` from `baseline`, nested repositories' files included; None
    when nothing changed or git failed."""
    for entry in sorted(os.scandir(workspace), key=lambda e: e.name) if workspace.is_dir() else []:
        if entry.name in (".git", "node_modules"):
            continue
        child = Path(entry.path)
        if (child / ".git").is_dir():
            _git(child, "add", "-A")  # so a nested repository's new files appear in the submodule diff
    if _git(workspace, "add", "-A") is None:
        return None
    diff = _git(workspace, "diff", baseline, "--submodule=diff")
    return (diff.strip() or None) if diff is not None else None


__all__ = ["capture_file_changes", "initialize_baseline"]
