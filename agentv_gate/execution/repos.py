"""A workspace's `repos` (AgentV 4.42's RepoManager): each repository cloned into the workspace at its `path`.

As in 4.42, a source is acquired through a mirror cache (`git clone --mirror`, fetched again on later runs,
the cached one used when that fetch fails), then cloned from the mirror without checkout, its `origin` set
back to the source, its `sparse` folders set (cone mode), and the commit (`commit`, else `base_commit`, else
HEAD; `ancestor` commits back) checked out detached. The mirror lives under the gate's cache folder, keyed
on the source and the commit asked for, never under `~/.agentv`. Every git command gets no inherited GIT_*
variable, no prompt, no hooks, and names its git folder, so none reaches a repository it was not given.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

from ..models import RepoSpec

GIT_SECONDS = 300.0
"""4.42's limit for one git command (DEFAULT_TIMEOUT_MS)."""
_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.ext.allow=never"]
_FULL_SHA = re.compile(r"^[0-9a-f]{40}$", re.IGNORECASE)


class RepoError(Exception):
    """A repository that could not be put in the workspace: the suite's (or the case's) cases are errors."""


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", GIT_SSH_COMMAND="ssh -o BatchMode=yes",
               GIT_CONFIG_NOSYSTEM="1")
    return env


def _git(args: list[str], git_dir: Path | None = None, work_tree: Path | None = None) -> str:
    """`git ARGS`, its stdout; RepoError with git's last words when it fails."""
    env = _env()
    if git_dir is not None:
        env.update(GIT_DIR=str(git_dir), GIT_CEILING_DIRECTORIES=str(git_dir.parent.parent))
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    cwd = work_tree or (git_dir if git_dir is not None and git_dir.is_dir() else None)
    try:
        done = subprocess.run(["git", *_SAFE, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=GIT_SECONDS)
    except (OSError, subprocess.SubprocessError) as exc:
        raise RepoError(f"git {args[0]}: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RepoError(f"git {args[0]} failed: {said[-1] if said else f'exit {done.returncode}'}")
    return done.stdout.decode("utf-8", "replace").strip()


def _safe_operand(value: str, label: str) -> None:
    if not value or "\0" in value or value.startswith("-"):
        raise RepoError(f"{label} {value!r} must not be empty, hold a NUL byte or start with '-'")


def _mirror(source: str, ref: str, cache: Path) -> Path:
    """The mirror of `source` under `cache`, made or fetched again (a fetch that fails keeps the cached one)."""
    key = hashlib.sha256(f"{source}\0{ref}".encode()).hexdigest()
    mirror = cache / key
    if (mirror / "HEAD").is_file():
        if _FULL_SHA.match(ref):
            try:
                _git(["cat-file", "-e", f"{ref}^{{commit}}"], git_dir=mirror)
                return mirror  # the pinned commit is there: nothing to fetch
            except RepoError:
                pass
        try:
            _git(["fetch", "--prune", "origin"], git_dir=mirror)
        except RepoError:
            pass  # as 4.42: the cached mirror is used
        return mirror
    cache.mkdir(parents=True, exist_ok=True)
    partial = cache / f"{key}.tmp-{uuid.uuid4().hex}"
    try:
        _git(["clone", "--mirror", "-q", "--", source, str(partial)])
        os.replace(partial, mirror)
    except OSError:
        if not (mirror / "HEAD").is_file():
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return mirror


def _resolve(ref: str, git_dir: Path) -> str:
    _safe_operand(ref, "repo checkout ref")
    candidates = [ref]
    if not ref.startswith(("refs/", "origin/")) and not _FULL_SHA.match(ref):
        candidates.append(f"refs/remotes/origin/{ref}")
    for candidate in candidates:
        try:
            return _git(["rev-parse", "--verify", "--end-of-options", f"{candidate}^{{commit}}"], git_dir=git_dir)
        except RepoError:
            continue
    raise RepoError(f"Cannot resolve ref '{ref}' to a commit.")


def checkout_commit(spec: RepoSpec, target: Path) -> str:
    """The commit `spec` asks for in the clone at `target`: its ref, `ancestor` commits back."""
    git_dir = target / ".git"
    sha = _resolve(spec.ref, git_dir)
    if spec.ancestor:
        try:
            return _resolve(f"{sha}~{spec.ancestor}", git_dir)
        except RepoError:
            raise RepoError(f"Cannot resolve ancestor {spec.ancestor} of ref '{spec.ref}'.") from None
    return sha


def materialize(spec: RepoSpec, workspace: Path, cache: Path) -> None:
    """Clone `spec` into `workspace/spec.path` at its commit; RepoError saying why it could not."""
    _safe_operand(spec.source, "repo clone source")
    target = (workspace / spec.path).resolve()
    if workspace.resolve() not in target.parents:
        raise RepoError(f"repo path {spec.path!r} is outside the workspace")
    if os.path.lexists(target) and (target.is_symlink() or any(target.iterdir())):
        raise RepoError(f"repo path {spec.path!r} is already in the workspace")
    try:
        mirror = _mirror(spec.source, spec.ref, cache)
    except RepoError as exc:
        raise RepoError(f"git clone {spec.repo}: {exc}") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    _git(["clone", "-q", "--no-checkout", "--", str(mirror), str(target)])
    alternates = target / ".git/objects/info/alternates"
    if alternates.is_file() and alternates.read_text().strip():
        raise RepoError(f"git clone {spec.repo} left an alternates dependency")
    git_dir = target / ".git"
    _git(["remote", "set-url", "origin", spec.source], git_dir=git_dir)
    if spec.sparse:
        for folder in spec.sparse:
            _safe_operand(folder, "repo sparse path")
        _git(["sparse-checkout", "init", "--cone"], git_dir=git_dir, work_tree=target)
        _git(["sparse-checkout", "set", "--", *spec.sparse], git_dir=git_dir, work_tree=target)
    _git(["checkout", "-q", "--detach", checkout_commit(spec, target)], git_dir=git_dir, work_tree=target)


def reset_repos(specs: list[RepoSpec], workspace: Path, mode: str) -> None:
    """A hook's `reset` with repos (4.42's RepoManager.reset): each back to its commit, untracked files removed."""
    for spec in specs:
        target = workspace / spec.path
        git_dir = target / ".git"
        try:
            sha = checkout_commit(spec, target)
            _git(["reset", "-q", "--hard", sha], git_dir=git_dir, work_tree=target)
            _git(["clean", "-q", "-fdx" if mode == "strict" else "-fd"], git_dir=git_dir, work_tree=target)
        except RepoError as exc:
            raise OSError(str(exc)) from None
