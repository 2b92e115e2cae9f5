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
    no_effect: bool = False
    """A setting AgentV 2.19 accepts and ignores: a warning, which `--strict` makes an error."""

    def __str__(self) -> str:
        tail = f" (expected {self.expected})" if self.expected else ""
        kind = "warning: " if self.severity == "warning" else ""
        return f"{self.file}:{self.line}: {kind}{self.message}{tail}"


def allowing_unknown_keys(problems: Iterable[Problem], allow: bool) -> list[Problem]:
    """The problems with unknown-key errors made warnings when the run allows them (never other errors)."""
    if not allow:
        return list(problems)
    return [replace(p, severity="warning") if p.unknown_key else p for p in problems]


def no_effect(file: Path, line: int, key: str, why: str, expected: str | None = None) -> Problem:
    """`file:line: warning: 'key' has no effect here: why`: a setting AgentV 2.19 reads and then ignores
    (or never reads), accepted as it accepts it, and said, so that the author learns it checks nothing."""
    return Problem(file, line, f"'{key}' has no effect here: {why}", expected, severity="warning", no_effect=True)


def strict_problems(problems: Iterable[Problem], strict: bool) -> list[Problem]:
    """The problems with every no-effect warning made an error when the run is `--strict`."""
    if not strict:
        return list(problems)
    return [replace(p, severity="error") if p.no_effect else p for p in problems]


class FoundProblems:
    """For results that carry `problems`: the errors (which stop a run) apart from the warnings."""

    problems: list[Problem]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]
