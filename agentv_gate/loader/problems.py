"""Located problems: every complaint about an eval file names file:line, what is wrong and what was expected."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    file: Path
    line: int
    message: str
    expected: str | None = None
    severity: str = "error"  # or "warning"

    def __str__(self) -> str:
        tail = f" (expected {self.expected})" if self.expected else ""
        kind = "warning: " if self.severity == "warning" else ""
        return f"{self.file}:{self.line}: {kind}{self.message}{tail}"


class FoundProblems:
    """For results that carry `problems`: the errors (which stop a run) apart from the warnings."""

    problems: list[Problem]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]
