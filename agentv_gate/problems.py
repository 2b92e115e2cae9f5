"""Located problems: every complaint about a suite names file:line, what is wrong and what was expected.

Below the loader and the targets layer so that both report in one shape, and `validate` prints
an eval file's typo and a targets.yaml typo alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    file: Path
    line: int
    message: str
    expected: str | None = None
    severity: str = "error"  # or "warning"
    unknown_key: bool = False
    """A key nobody reads: `--allow-unknown-keys` turns exactly these (and nothing else) into warnings."""

    def __str__(self) -> str:
        tail = f" (expected {self.expected})" if self.expected else ""
        kind = "warning: " if self.severity == "warning" else ""
        return f"{self.file}:{self.line}: {kind}{self.message}{tail}"


def allowing_unknown_keys(problems: Iterable[Problem], allow: bool) -> list[Problem]:
    """The problems with unknown-key errors made warnings when the run allows them (never other errors)."""
    if not allow:
        return list(problems)
    return [replace(p, severity="warning") if p.unknown_key else p for p in problems]


class FoundProblems:
    """For results that carry `problems`: the errors (which stop a run) apart from the warnings."""

    problems: list[Problem]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]
