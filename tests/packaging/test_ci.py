"""What CI runs: `.ci/run` is `make test`, and `make test` type-checks the package before the suite."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _recipe(target: str) -> list[str]:
    """The command lines of one Makefile target, in order."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        if not line.strip().startswith("@#"):  # a recipe's comment, not a command
            recipe.append(line.strip())
    return recipe


def test_ci_runs_mypy_on_the_package_before_the_test_suite() -> None:
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    recipe = _recipe("test")
    # compiled once before the suite: the CLI the tests start then never compiles agentv_gate itself
    assert recipe == ["$(BIN)/mypy agentv_gate", "$(BIN)/python -m compileall -q agentv_gate",
                      "$(BIN)/python -m pytest -n 2 --dist loadfile"]
