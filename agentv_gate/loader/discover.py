"""Which files are eval suites: the paths given, and the eval files inside folders.

Kept apart from reading suites because the pre-commit hooks, `validate` and `run` all ask the
same question, and the answer must never depend on what a suite holds.
"""

from __future__ import annotations

from pathlib import Path

from ..base.key_checks import closest
from ..base.problems import Problem
from .globs import matches_any
from .project_config import nearest_config, read_project_config
from .refs import find_repo_root

SKIPPED_NAMES = {"targets.yaml", "targets.yml", "config.yaml", "config.yml", ".pre-commit-config.yaml",
                 ".pre-commit-hooks.yaml", "action.yml", "action.yaml"}


def discover_eval_files(paths: list[Path]) -> tuple[list[Path], list[Problem]]:
    """Files as given; folders searched for eval files.

    Inside a folder, `*.eval.yaml` files and anything under an `evals/` folder count; plain
    `*.yaml` elsewhere is skipped so a repo's CI and config files are never taken for suites.
    A JSONL file's same-named YAML sidecar is its metadata, not a suite of its own.
    A folder under a `.agentv/config.yaml` with `eval_patterns` is searched with those patterns instead,
    as AgentV discovers suites (`eval_patterns_files`).
    """
    found: list[Path] = []
    problems: list[Problem] = []
    for path in paths:
        if path.is_file():
            suite = path.with_suffix(".jsonl")
            # A JSONL suite's sidecar named on its own (a commit touching only it) means the suite.
            found.append(suite if path.suffix in (".yaml", ".yml") and suite.is_file() else path)
            continue
        if not path.is_dir():
            problems.append(Problem(path, 0, f"no such file or folder{_similar_file(path)}",
                                    "an eval file or a folder of them"))
            continue
        patterned = eval_patterns_files(path, problems)
        if patterned is not None:
            found.extend(patterned)
            continue
        for candidate in sorted(path.rglob("*")):
            if candidate.name in SKIPPED_NAMES or any(part.startswith(".") or part in {"node_modules", "__pycache__"}
                                                      for part in candidate.relative_to(path).parts[:-1]):
                continue
            name = candidate.name
            in_evals = "evals" in candidate.relative_to(path).parts[:-1] or path.name == "evals"
            named = name.endswith((".eval.yaml", ".eval.yml", ".eval.jsonl"))
            if not (named or (in_evals and name.endswith((".jsonl", ".yaml", ".yml")))):
                continue
            if not candidate.is_file():
                problems.extend(_broken_link(candidate))
                continue
            if not named and name.endswith((".yaml", ".yml")) and candidate.with_suffix(".jsonl").exists():
                continue  # sidecar of a JSONL suite
            found.append(candidate)
    unique: dict[Path, Path] = {}
    for f in found:
        unique.setdefault(f.resolve(), f)
    return list(unique.values()), problems


def eval_patterns_files(folder: Path, problems: list[Problem] | None = None) -> list[Path] | None:
    """The files under `folder` that the nearest config's `eval_patterns` name, as AgentV's fast-glob
    finds them (relative to the folder, case-insensitive, no hidden folders, nor node_modules or dist);
    None when no config between the folder and the repository root sets any."""
    config = nearest_config(folder / "_", find_repo_root(folder))
    patterns = read_project_config(config).eval_patterns if config is not None else None
    if not patterns:
        return None
    found: list[Path] = []
    for candidate in sorted(folder.rglob("*")):
        relative = candidate.relative_to(folder).parts
        if any(part.startswith(".") or part in {"node_modules", "dist"} for part in relative):
            continue
        if not matches_any("/".join(relative), patterns, ignore_case=True):
            continue
        if candidate.is_file():
            found.append(candidate)
        elif problems is not None:
            problems.extend(_broken_link(candidate))
    return found


def _broken_link(candidate: Path) -> list[Problem]:
    """A problem for an eval file's name that is a link leading to no file (its target moved, or a loop of
    links): skipped in silence, its cases would never run and the gate could pass without them."""
    if not candidate.is_symlink() or candidate.exists():
        return []  # a folder named like a suite
    try:
        target = f" to {candidate.readlink()}"
    except OSError:
        target = ""
    return [Problem(candidate, 0, f"a link{target} that leads to no file (moved, removed, or a loop of links)",
                    "an eval file, or no link")]


def nothing_found(what: str, paths: list[Path]) -> str:
    """`no eval <what> found in <paths>`, with the naming rule: the likeliest cause is a file the rule skips."""
    where = ", ".join(str(p) for p in paths) or "."
    return (f"no eval {what} found in {where} (eval files are *.eval.yaml, *.eval.yml or *.eval.jsonl anywhere, "
            "or any .yaml, .yml or .jsonl inside an evals/ folder)")


def default_eval_paths(paths: list[Path] | None) -> list[Path]:
    """The paths given, else `./evals` when it exists, else the working folder."""
    if paths:
        return paths
    return [Path("evals")] if Path("evals").is_dir() else [Path(".")]


def _similar_file(path: Path) -> str:
    """` (did you mean 'evals/geo.eval.yaml'?)` for a mistyped path whose folder exists, else ""."""
    folder = path.parent
    try:
        names = [child.name for child in folder.iterdir()] if folder.is_dir() else []
    except OSError:
        return ""
    name = closest(path.name, names)
    return f" (did you mean '{folder / name}'?)" if name else ""
