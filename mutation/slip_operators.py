"""Mutation operators for slips cosmic-ray's core operators do not make: a best-of that takes the worst,
a first-of that takes the last, a tail that keeps the head.

cosmic-ray's core already turns `>` into `>=` and `<` into `<=` (ReplaceComparisonOperator_*), the
boundary slips; these three model the other choices a hand-made audit found unguarded:

* `slips/SwapMinMax`: `min(...)` <-> `max(...)` (pass_at_k's best trial, a clamp's bounds);
* `slips/FirstLast`: `x[0]` <-> `x[-1]` (the first error, the last reported score);
* `slips/HeadTail`: `x[-N:]` <-> `x[:N]` and `x[:-N]` <-> `x[N:]` (a long output's end, not its start).

`run_mutation.py` makes them an operator provider of cosmic-ray (an entry point in a generated
`.dist-info` on PYTHONPATH), so `cosmic-ray init` lists their mutants beside the core ones and the
same session, sample and recheck apply. Each mutant is written as text: a leaf whose value is the
new code keeps the node's prefix (its white space and comments), and cosmic-ray writes the module
from the tree's code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import parso.python.tree as tree
from cosmic_ray.operators.operator import Example, Operator

Position = tuple[tuple[int, int], tuple[int, int]]


def _as_text(node: Any, code: str) -> tree.Name:
    """A leaf that prints as `code`, with `node`'s prefix: what replaces `node` in the module."""
    return tree.Name(code, node.start_pos, prefix=node.get_first_leaf().prefix)


def _called(node: Any) -> bool:
    following = node.get_next_sibling()
    return following is not None and following.type == "trailer" and following.children[0] == "("


def _index(node: Any) -> str | None:
    """The code inside `[...]` when `node` is a subscript trailer, else None."""
    if node.type != "trailer" or node.children[0] != "[" or len(node.children) != 3:
        return None
    return str(node.children[1].get_code()).strip()


class SwapMinMax(Operator):
    """`min(...)` <-> `max(...)`: the best and the worst swapped."""

    def mutation_positions(self, node: Any) -> Iterator[Position]:
        if node.type == "name" and node.value in ("min", "max") and _called(node):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: Any, index: int) -> Any:
        return tree.Name("max" if node.value == "min" else "min", node.start_pos, prefix=node.prefix)

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("x = max(a, b)", "x = min(a, b)"), Example("x = min(a)", "x = max(a)"))


class FirstLast(Operator):
    """`x[0]` <-> `x[-1]`: the first taken for the last, or the last for the first."""

    def mutation_positions(self, node: Any) -> Iterator[Position]:
        if _index(node) in ("0", "-1"):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: Any, index: int) -> Any:
        return _as_text(node, "[-1]" if _index(node) == "0" else "[0]")

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("y = x[0]", "y = x[-1]"), Example("y = x[-1]", "y = x[0]"))


class HeadTail(Operator):
    """`x[-N:]` <-> `x[:N]` (the end kept, or the start) and `x[:-N]` <-> `x[N:]` (the end dropped, or the start)."""

    def mutation_positions(self, node: Any) -> Iterator[Position]:
        if self._swapped(node) is not None:
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: Any, index: int) -> Any:
        swapped = self._swapped(node)
        assert swapped is not None
        return _as_text(node, swapped)

    @staticmethod
    def _swapped(node: Any) -> str | None:
        inside = _index(node)
        if inside is None or inside.count(":") != 1 or node.children[1].type != "subscript":
            return None
        start, stop = (part.strip() for part in inside.split(":"))
        if start and not stop:  # x[-N:] or x[N:]
            return f"[:{start[1:]}]" if start.startswith("-") else f"[:-{start}]"
        if stop and not start:  # x[:N] or x[:-N]
            return f"[{stop[1:]}:]" if stop.startswith("-") else f"[-{stop}:]"
        return None

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("y = x[-n:]", "y = x[:n]"), Example("y = x[:n]", "y = x[-n:]"),
                Example("y = x[:-1]", "y = x[1:]"), Example("y = x[2:]", "y = x[:-2]"))


_OPERATORS: dict[str, type[Operator]] = {op.__name__: op for op in (SwapMinMax, FirstLast, HeadTail)}


class OperatorProvider:
    """cosmic-ray's operator-provider protocol: iterate the names, look a class up by name."""

    def __iter__(self) -> Iterator[str]:
        return iter(_OPERATORS)

    def __getitem__(self, name: str) -> type[Operator]:
        return _OPERATORS[name]
