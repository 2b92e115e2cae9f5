"""`commands/run.py` stays readable as named steps: no function in it grows past 60 lines.

A run command that does everything in one function (plan, shard, rerun, baseline, cache, targets, writer,
signals, clean-up, reports) with closures sharing its locals is where a change of one step breaks another;
`RunSession` gives each step a name. This keeps the next step from growing back into one function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentv_gate.commands.run as run_command

MAX_LINES = 60


def function_lengths(path: Path) -> dict[str, int]:
    """Every function and method of `path`, nested ones included, by qualified name -> lines it spans."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lengths[name] = (child.end_lineno or child.lineno) - child.lineno + 1
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def test_no_function_in_the_run_command_is_over_60_lines() -> None:
    lengths = function_lengths(Path(run_command.__file__))
    assert {"execute", "RunSession.start", "RunSession.on_result", "RunSession.interrupted",
            "RunSession.finish"} <= set(lengths)
    too_long = {name: lines for name, lines in lengths.items() if lines > MAX_LINES}
    assert not too_long, f"functions over {MAX_LINES} lines in commands/run.py: {too_long}"


def test_the_measure_counts_a_long_function_and_a_nested_one(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    source = tmp_path / "long.py"
    source.write_text(f"def outer():\n    def inner():\n        pass\n{body}\n\nclass C:\n    def m(self):\n        pass\n")
    assert function_lengths(source) == {"outer": 64, "outer.inner": 2, "C.m": 2}
