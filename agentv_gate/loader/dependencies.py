"""A test's `depends_on` and `on_dependency_failure` (AgentV 4.x), and the check of a suite's dependency graph.

4.42 reads `depends_on` as a list of test ids of the same eval file and `on_dependency_failure` as `skip`
(the default), `fail` or `run`; before a file runs it refuses a dependency on an id the file does not have,
on the test itself, and a cycle (`validateDependencyGraph`). The same three are refused here, each at the
line of the `depends_on` that makes it, before anything runs. How the cases then run: execution/dependencies.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, cast

from ..base.problems import Problem
from ..errors import EvalFileError
from .yaml_lines import key_line, line_of, yaml_kind

Policy = Literal["skip", "fail", "run"]
POLICIES: tuple[Policy, ...] = ("skip", "fail", "run")


class Dependencies(NamedTuple):
    """One case's dependency settings as written, and where."""

    case_id: str
    depends_on: tuple[str, ...]
    file: Path
    """The file it is written in (a case file's cases keep their own)."""
    line: int
    """The line of its `depends_on` (the case's own line when it has none)."""


def parse_depends_on(raw: dict[str, Any], line: int) -> tuple[tuple[str, ...], Policy]:
    """(`depends_on`, `on_dependency_failure`) of a test; a value 4.42's schema refuses is refused at its line."""
    written = raw.get("depends_on")
    at = key_line(raw, "depends_on", line)
    if written is None:
        ids: tuple[str, ...] = ()
    elif not isinstance(written, list) or not all(isinstance(item, str) and item.strip() for item in written):
        raise EvalFileError(line_of(written, at), f"'depends_on' must be a list of test ids, got {yaml_kind(written)}"
                            if not isinstance(written, list) else "'depends_on' must list test ids (text)",
                            "depends_on: [an-earlier-test-id]")
    else:
        ids = tuple(dict.fromkeys(written))
    policy = raw.get("on_dependency_failure")
    if policy is None:
        policy = "skip"
    elif policy not in POLICIES:
        raise EvalFileError(key_line(raw, "on_dependency_failure", line),
                            f"'on_dependency_failure' must be skip, fail or run, got {policy!r}", "skip, fail or run")
    return ids, cast(Policy, policy)


def graph_problems(cases: Sequence[Dependencies]) -> list[Problem]:
    """An unknown id, a test depending on itself, and each cycle, at the `depends_on` line that makes it."""
    ids = {case.case_id for case in cases}
    problems: list[Problem] = []
    for case in cases:
        for dependency in case.depends_on:
            if dependency == case.case_id:
                problems.append(Problem(case.file, case.line, f"test '{case.case_id}' depends on itself",
                                        "the ids of other tests of this file"))
            elif dependency not in ids:
                problems.append(Problem(case.file, case.line, f"test '{case.case_id}' depends on '{dependency}', but no "
                                        "test with that id exists in this file", "the ids of tests of this file"))
    if problems:
        return problems
    edges = {case.case_id: case.depends_on for case in cases}
    where = {case.case_id: (case.file, case.line) for case in cases}
    done: set[str] = set()
    for start in edges:
        cycle = _cycle_from(start, edges, done)
        if cycle is not None:
            problems.append(Problem(*where[cycle[0]], f"circular dependency: {' -> '.join(cycle)}",
                                    "tests that depend only on tests that do not depend back on them"))
    return problems


def _cycle_from(start: str, edges: dict[str, tuple[str, ...]], done: set[str]) -> list[str] | None:
    """A cycle reachable from `start` not reported before (each id on a reported path is `done`)."""
    path: list[str] = []
    on_path: set[str] = set()
    stack: list[tuple[str, int]] = [(start, 0)]
    while stack:
        node, index = stack.pop()
        if index == 0:
            if node in done:
                continue
            if node in on_path:
                cycle = path[path.index(node):] + [node]
                done.update(path)
                return cycle
            path.append(node)
            on_path.add(node)
        children = edges.get(node, ())
        if index < len(children):
            stack.append((node, index + 1))
            stack.append((children[index], 0))
        else:
            path.pop()
            on_path.discard(node)
            done.add(node)
    return None


class Dependent(Protocol):
    """A case or its `CaseRef`: what a selection needs to keep a case's dependencies with it."""

    @property
    def suite(self) -> str: ...

    @property
    def id(self) -> str: ...

    @property
    def depends_on(self) -> Sequence[str]: ...


D = TypeVar("D", bound=Dependent)


def left_out_dependencies(selected: Sequence[D]) -> list[tuple[D, str]]:
    """(case, dependency id) for each dependency of a selected case that the selection does not hold."""
    chosen = {(case.suite, case.id) for case in selected}
    return [(case, dependency) for case in selected for dependency in case.depends_on
            if (case.suite, dependency) not in chosen]


def with_dependencies(chosen: Sequence[D], pool: Sequence[D]) -> list[D]:
    """`chosen` and every case of `pool` a chosen case depends on, directly or not, in `pool`'s order."""
    by_key = {(case.suite, case.id): case for case in pool}
    wanted = {(case.suite, case.id) for case in chosen}
    todo = list(chosen)
    while todo:
        case = todo.pop()
        for dependency in case.depends_on:
            key = (case.suite, dependency)
            if key not in wanted and key in by_key:
                wanted.add(key)
                todo.append(by_key[key])
    return [case for case in pool if (case.suite, case.id) in wanted]


def dependency_groups(cases: Sequence[D]) -> list[list[D]]:
    """The cases in groups that must run together: each suite's cases linked by `depends_on`, directly or
    not, form one group; a case with no dependency link is a group of its own. Groups keep `cases`' order
    and come in the order of their first case."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def root(key: tuple[str, str]) -> tuple[str, str]:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    keys = {(case.suite, case.id) for case in cases}
    for case in cases:
        for dependency in case.depends_on:
            other = (case.suite, dependency)
            if other in keys:
                a, b = root((case.suite, case.id)), root(other)
                if a != b:
                    parent[a] = b
    groups: dict[tuple[str, str], list[D]] = {}
    for case in cases:
        groups.setdefault(root((case.suite, case.id)), []).append(case)
    return list(groups.values())
