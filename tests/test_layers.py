"""The package's layers as a test: a module imports its own package or a layer below, never a peer or above.

Cycles between packages start as one convenient import; this makes the first one a red test instead of a
refactoring months later. TYPE_CHECKING imports count: a cycle in the types is a cycle in the design.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "agentv_gate"

LAYERS: list[set[str]] = [  # lowest first; "" is agentv_gate/__init__.py
    {"base", "case_run"},  # stdlib only, nothing else of the package: what every other module may build on
    {"", "errors", "redaction", "models"},
    {"transport", "yaml_reader"},  # yaml_reader: the one YAML reader, for the loader and targets.yaml alike
    {"loader", "targets", "judging"},
    {"evaluators", "execution"},  # execution: trials, stop policies, workspace hooks (for the orchestrator)
    {"orchestrator", "report"},
    {"commands", "sdk", "sdk_path"},
    {"cli"},
    {"__main__"},  # `python -m agentv_gate`: only calls cli.main
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _top(path: Path) -> str:
    """`agentv_gate/targets/cache.py` -> "targets"; `agentv_gate/cli.py` -> "cli"."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return "" if parts == ("__init__",) else parts[0]


def _imported_tops(path: Path) -> Iterator[tuple[int, str]]:
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - node.level + 1])
            target = [*base, *(node.module or "").split(".")] if node.module else base
            names = [target] if node.module else [[*target, alias.name] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [(node.module or "").split(".")]
        elif isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        else:
            continue
        for name in names:
            if name[0] == PACKAGE.name:
                yield node.lineno, name[1] if len(name) > 1 and name[1] in RANK else ""


def test_every_module_has_a_layer() -> None:
    unplaced = sorted({_top(p) for p in PACKAGE.rglob("*.py")} - set(RANK))
    assert not unplaced, f"modules with no layer in LAYERS: {unplaced}"


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    here = _top(path)
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {here or 'agentv_gate'} -> {there}"
        for line, there in _imported_tops(path)
        if there != here and RANK[there] >= RANK[here]
    ]
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


MODEL_LAYERS: list[set[str]] = [  # inside agentv_gate/models, lowest first
    {"results", "messages"},  # scores and result rows; chat messages and a target's answer
    {"config"},  # the evaluator config schema (reads PASS_SCORE for `required`)
    {"cases"},  # an eval case holds its evaluator configs
    {"context"},  # what one evaluator sees: a case, a config, an answer
    {"__init__"},  # re-exports every public name
]
MODEL_RANK = {name: rank for rank, names in enumerate(MODEL_LAYERS) for name in names}


def test_models_modules_import_down() -> None:
    """The schema, the cases and the results stay separate modules only while none reaches up into another."""
    folder = PACKAGE / "models"
    assert {p.stem for p in folder.glob("*.py")} == set(MODEL_RANK), "a models module with no place in MODEL_LAYERS"
    wrong = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                there = node.module.split(".")[0]
                if MODEL_RANK[there] >= MODEL_RANK[path.stem]:
                    wrong.append(f"models/{path.name}:{node.lineno}: {path.stem} -> {there}")
    assert not wrong, "imports against the models layers:\n" + "\n".join(wrong)


def _outside_imports(path: Path) -> set[str]:
    """The top-level third-party names `path` imports (the package's own and relative imports left out)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names - {PACKAGE.name}


def test_the_github_client_is_in_transport_and_no_command_speaks_http() -> None:
    """The GitHub REST client sits in transport/ beside the model HTTP (same session, same whole-call
    deadline): no module of commands/ or report/ speaks HTTP itself."""
    client = PACKAGE / "transport" / "github.py"
    assert client.is_file()
    siblings = {there for _, there in _imported_tops(client)}
    assert siblings <= {"transport", "redaction"}, siblings
    source = client.read_text(encoding="utf-8")
    assert "from .deadline import attempt_deadline" in source and "from .session import" in source
    talking = [str(p.relative_to(PACKAGE)) for folder in ("commands", "report") for p in (PACKAGE / folder).rglob("*.py")
               if {"requests", "urllib3", "http"} & _outside_imports(p)]
    assert not talking, f"HTTP spoken outside transport/: {talking}"


BASELINE_LAYERS: list[set[str]] = [  # inside agentv_gate/report/baseline, lowest first
    {"__init__"},  # says the order; imports nothing
    {"stats", "pooled"},  # the arithmetic; the prior fitted to the whole base
    {"sequential"},  # the per-case guard's sequential test, on it
    {"compare"},  # base and head rows paired, each case labelled
    {"paired"},  # the statistical reading over trials
    {"gate"},  # the verdict, and the one place the exit code is decided
    {"render"},  # what the reports show of it
]
BASELINE_RANK = {name: rank for rank, names in enumerate(BASELINE_LAYERS) for name in names}


def test_the_baseline_feature_runs_one_way() -> None:
    """stats -> compare -> paired -> gate -> render: each module of report/baseline/ imports only those
    before it, and nothing of report/ outside it imports back into the decision but through its names."""
    folder = PACKAGE / "report" / "baseline"
    assert {p.stem for p in folder.glob("*.py")} == set(BASELINE_RANK), "a baseline module with no place in BASELINE_LAYERS"
    wrong = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 1):
                continue
            names = [node.module.split(".")[0]] if node.module else [alias.name for alias in node.names]
            for there in names:
                if BASELINE_RANK[there] >= BASELINE_RANK[path.stem]:
                    wrong.append(f"report/baseline/{path.name}:{node.lineno}: {path.stem} -> {there}")
    assert not wrong, "imports against the baseline order:\n" + "\n".join(wrong)


def test_no_command_imports_another_command() -> None:
    """commands/ is one file per subcommand and the glue they share (`_`-named): a subcommand never
    imports another subcommand."""
    folder = PACKAGE / "commands"
    commands = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    wrong = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module.split(".")[0]] if node.module else [alias.name for alias in node.names]
                wrong += [f"commands/{path.name}:{node.lineno}: -> {n}" for n in names if n in commands and n != path.stem]
    assert not wrong, "a command imports another:\n" + "\n".join(wrong)
