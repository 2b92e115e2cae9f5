"""What the agent changed in its workspace, as AgentV 2.19 tells its evaluators (`fileChanges`).

When a suite's workspace is made (execution/hooks.py) and its `before_all` has run, AgentV makes it
a git repository and commits everything in it as a baseline; after each case's target answers, it
stages everything (inside nested repositories too) and gives the evaluators `git diff BASELINE
--submodule=diff`: a code judge's `file_changes`, a prompt's `{{file_changes}}`, and a
`[[ ## file_changes ## ]]` section in the default and rubric prompts. The baseline is the suite's,
so a case sees what earlier cases and its `before_each` changed, unless a hook resets the folder.

Best effort, as in AgentV: without git, or when a git command fails, there is no baseline or no
diff, and the case runs as it would without a workspace diff.

Git runs only on the workspace's own repository: the agent (or a hook) may link the team's checkout
into the workspace, write a `.git` file pointing at the team's repository, or the workspace may sit
inside one. So every command names its git folder and work tree explicitly (no discovery upwards),
a `.git` that is a link, a file, or shares another repository's objects is not used, and a linked
folder is recorded as a link, never entered. The diff is cut at the cap of every captured stream,
with a note saying so.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from ..base.defaults import DEFAULT_MAX_RESPONSE_BYTES

_GIT_SECONDS = 60.0
_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.symlinks=true"]
_COMMIT = ["-c", "user.email=agentv@localhost", "-c", "user.name=agentv", "-c", "commit.gpgsign=false",
           "commit", "-q", "--no-verify", "--allow-empty", "-m", "agentv-baseline"]
FILE_CHANGES_LIMIT = DEFAULT_MAX_RESPONSE_BYTES
"""The diff given to the evaluators is cut past this many bytes (the cap of every captured stream)."""


def _own_git_dir(root: Path, *, may_be_missing: bool = False) -> bool:
    """Whether `root/.git` is a repository folder of `root`'s own: a real folder (not a link, not a
    `gitdir:` file), sharing no other repository's objects (`commondir`, a linked `objects`)."""
    git = root / ".git"
    if not os.path.lexists(git):
        return may_be_missing
    if git.is_symlink() or not git.is_dir() or os.path.lexists(git / "commondir"):
        return False
    return not any((git / part).is_symlink() for part in ("objects", "refs", "index", "HEAD", "config"))


def _git(root: Path, *args: str, stdout: int | None = None) -> str | None:
    """`git ARGS` on `root`'s own repository, its stdout, or None when it failed.

    Every GIT_* variable agentv-gate inherited (run as a pre-commit hook, git's GIT_DIR and
    GIT_INDEX_FILE point at the team's repository) is left out; the git folder and work tree are
    named, and no repository above `root` is looked for."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_DIR=str(root / ".git"), GIT_WORK_TREE=str(root), GIT_CEILING_DIRECTORIES=str(root.parent))
    try:
        done = subprocess.run(["git", *_SAFE, *args], cwd=root, env=env, stdin=subprocess.DEVNULL,
                              stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=_GIT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace") if stdout is None else ""


def initialize_baseline(workspace: Path) -> str | None:
    """Make `workspace` a git repository whose one commit holds what it holds now; that commit's id."""
    root = workspace.resolve()
    if not _own_git_dir(root, may_be_missing=True):
        return None
    for args in (["init", "-q"], ["add", "-A"], _COMMIT):
        if _git(root, *args) is None:
            return None
    head = _git(root, "rev-parse", "HEAD")
    return head.strip() if head else None


def reset_workspace(workspace: Path, mode: str, baseline: str | None) -> bool:
    """A hook's `reset` (AgentV 4.42's resetWorkspaceRoot): the workspace back to `baseline` (else its last
    commit) with `git reset --hard`, untracked files removed (`git clean -fd`; `strict` also ignored ones,
    `-fdx`). False, doing nothing, when the workspace is not a repository of its own; raises OSError when
    git failed."""
    root = workspace.resolve()
    if not os.path.lexists(root / ".git") or not _own_git_dir(root):
        return False
    for args in (["reset", "-q", "--hard", baseline or "HEAD"], ["clean", "-q", "-fdx" if mode == "strict" else "-fd"]):
        if _git(root, *args) is None:
            raise OSError(f"git {' '.join(args[:1])} failed in the workspace")
    return True


def cut_diff(data: bytes, size: int, limit: int = FILE_CHANGES_LIMIT) -> str:
    """The first bytes of a `size`-byte diff decoded, cut past `limit` bytes with a note saying how
    much was left out."""
    if size <= limit:
        return data.decode("utf-8", "replace")
    kept = data[:limit].decode("utf-8", "ignore")
    return f"{kept}\n… [file_changes cut at {limit:,} bytes: {size - limit:,} more bytes not shown]"


def capture_file_changes(workspace: Path, baseline: str) -> str | None:
    """The unified diff of `workspace` from `baseline`, nested repositories' files included; None
    when nothing changed or git failed."""
    root = workspace.resolve()
    if not root.is_dir() or not _own_git_dir(root):
        return None
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.name in (".git", "node_modules") or not entry.is_dir(follow_symlinks=False):
            continue  # a linked folder is a link in the diff, never a repository to stage in
        child = Path(entry.path)
        if os.path.lexists(child / ".git") and _own_git_dir(child):
            _git(child, "add", "-A")  # so a nested repository's new files appear in the submodule diff
    if _git(root, "add", "-A") is None:
        return None
    with tempfile.TemporaryFile() as out:
        if _git(root, "diff", baseline, "--submodule=diff", stdout=out.fileno()) is None:
            return None
        size = out.seek(0, os.SEEK_END)
        out.seek(0)
        data = out.read(FILE_CHANGES_LIMIT + 1)
    return cut_diff(data, size).strip() or None


__all__ = ["FILE_CHANGES_LIMIT", "capture_file_changes", "cut_diff", "initialize_baseline"]
