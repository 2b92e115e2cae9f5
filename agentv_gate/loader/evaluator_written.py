"""One evaluator entry while the loader reads it: what was written, where, and what it becomes.

The parser's steps (normalise, validate, check, resolve) each take this one object, so a step
keyed by config class needs no argument list of its own and a new kind adds a row, not a parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.generations import Generation
from ..base.problems import Problem, no_effect
from ..models import EvaluatorConfig
from ..models.config import EVALUATOR_KINDS
from .refs import SearchRoots


@dataclass
class Written:
    """An evaluator mapping as written (`raw`, with its recorded lines) and as it is being normalised (`data`)."""

    raw: Any
    data: dict[str, Any]
    kind: str
    """The kind the `type:` names (aliases read, `-` as `_`); a variant's base kind once it is applied."""
    line: int
    file: Path
    roots: SearchRoots
    problems: list[Problem]
    parse_members: Callable[[Any], list[EvaluatorConfig]]
    """Parses a composite's member list with the same roots and problems (the parser's own entry point)."""
    generation: Generation = "2.x"
    file_generation: Generation = "2.x"
    """The AgentV the entry's file is read as: it names an unnamed entry as that AgentV names it."""
    rubric_form: bool = False
    """Written as `type: rubrics` with `criteria:` (its own keys, and `rubrics` as its default name)."""
    members: Any = field(default=None)
    """A composite's member list as written, parsed once the composite itself validates."""

    @property
    def config_class(self) -> type[Any]:
        return EVALUATOR_KINDS[self.kind]

    @property
    def where(self) -> str:
        """`contains evaluator 'n'`: how messages name the evaluator once it has its name."""
        return f"{self.kind} evaluator '{self.data['name']}'"

    def warn(self, line: int, key: str, why: str, instead: str) -> None:
        """A setting AgentV accepts and ignores: said where it is written, and the entry still loads."""
        self.problems.append(no_effect(self.file, line, key, why, instead))
