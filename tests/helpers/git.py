"""Scratch git repositories for tests that read a commit or a diff (`--affected-since`, `--record`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

_IDENTITY = ["-c", "user.email=test@example.com", "-c", "user.name=test", "-c", "commit.gpgsign=false"]


def git(repo: Path, *args: str) -> str:
    """`git ARGS` in `repo`, its stdout stripped; a failing command fails the test."""
    done = subprocess.run(["git", *_IDENTITY, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_all(repo: Path, message: str = "snapshot") -> str:
    """Every file of `repo` committed on branch `main` (the repository made if need be); the new commit's sha."""
    if not (repo / ".git" / "HEAD").exists():
        git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, "--allow-empty")
    return git(repo, "rev-parse", "HEAD")
