"""No docstring points at a file that does not exist: a path in a docstring is where the reader goes next,
and a module moved or deleted leaves it pointing nowhere (`evaluators/generations.py`, long gone)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentv_gate"
ROOTS = {"agentv_gate", "tests", "docs", "bench", "mutation", "examples"} | {
    p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")}
"""A path's first part that makes it a file of this repository (`targets/kinds.py` is agentv_gate's)."""
PATH = re.compile(r"(?<![\w/.${-])((?:[\w-]+/)+[\w-]+\.(?:py|md|yaml|yml|json|txt|xsd|patch))\b")
EXAMPLES = {"docs/a/b.md"}
"""Paths a docstring shows as an example of something else (a glob's match), not as a file to read."""


def docstring_paths(source: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = node.body[0] if node.body else None
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
                found.extend((doc.lineno, m.group(1)) for m in PATH.finditer(doc.value.value)
                             if m.group(1).split("/")[0] in ROOTS)
    return found


def exists(path: str) -> bool:
    return path in EXAMPLES or (ROOT / path).exists() or (PACKAGE / path).exists()


def test_every_path_a_docstring_names_exists() -> None:
    missing = [f"{path.relative_to(ROOT)}:{line}: {ref}"
               for path in sorted(PACKAGE.rglob("*.py"))
               for line, ref in docstring_paths(path.read_text(encoding="utf-8")) if not exists(ref)]
    assert not missing, "docstrings pointing at no file:\n" + "\n".join(missing)


def test_a_moved_module_is_found() -> None:
    source = '"""See evaluators/generations.py and targets/kinds.py; not evals/geo.eval.yaml (a user\'s)."""\n'
    assert [ref for _, ref in docstring_paths(source)] == ["evaluators/generations.py", "targets/kinds.py"]
    assert not exists("evaluators/generations.py") and exists("targets/kinds.py")
