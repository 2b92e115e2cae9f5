"""Fixtures for the hardening tests: the hostile judges copied into a repository, and a crash check."""

from __future__ import annotations

from pathlib import Path

JUDGES = Path(__file__).resolve().parents[1] / "hardening" / "judges"


def copy_judges(repo: Path) -> Path:
    """The fixture judges copied into the repository (scripts outside the repo root are refused)."""
    folder = repo / "evals" / "judges"
    folder.mkdir(parents=True, exist_ok=True)
    for judge in JUDGES.glob("*.py"):
        (folder / judge.name).write_text(judge.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def no_traceback(text: str) -> bool:
    """No Python traceback: whatever went wrong was reported, not crashed on."""
    return "Traceback (most recent call last)" not in text
