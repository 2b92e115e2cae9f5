"""What CI runs: `.ci/run` is `make test`, and `make test` lints the package before the suite."""

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


def test_ci_lints_the_package_before_the_test_suite() -> None:
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    prerequisites = next(line for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
                         if line.startswith("test:")).split(":", 1)[1].split()
    assert prerequisites[-1] == "lint"  # make builds prerequisites in order: lint before the recipe
    assert _recipe("lint") == ["$(BIN)/ruff check agentv_gate tests", "$(BIN)/vulture", "$(BIN)/mypy agentv_gate"]
    # compiled once before the suite: the CLI the tests start then never compiles agentv_gate itself
    assert _recipe("test") == ["$(BIN)/python -m compileall -q agentv_gate", "@$(MAKE) -s compat-note",
                               "$(BIN)/python -m pytest -n 4 --dist loadfile"]


def test_make_test_says_in_one_line_why_the_agentv_replay_tests_skip(tmp_path: Path) -> None:
    """A fresh clone has no ../shared/agentv: `make test` says so before the suite, once."""
    import subprocess

    missing = subprocess.run(["make", "-s", "compat-note", f"SHARED_AGENTV={tmp_path / 'agentv'}"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 0 and missing.stdout.count("\n") == 1, missing.stdout + missing.stderr
    assert "AgentV replay tests (tests/compat) skip" in missing.stdout
    (tmp_path / "agentv").mkdir()
    present = subprocess.run(["make", "-s", "compat-note", f"SHARED_AGENTV={tmp_path / 'agentv'}"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert present.returncode == 0 and present.stdout == ""
    assert "@$(MAKE) -s compat-note" in _recipe("test")
