"""Located problems (defined below the loader, so targets.yaml checks report in the same shape)."""

from __future__ import annotations

from ..problems import FoundProblems, Problem, allowing_unknown_keys, no_effect, strict_problems

__all__ = ["FoundProblems", "Problem", "allowing_unknown_keys", "no_effect", "strict_problems"]
