"""pydantic's validation errors as the loader reports them: `file:line: <kind> evaluator 'n': field 'x': ...`.

One translator for every evaluator kind: the entry's recorded line, the keys the user wrote (never the union
members pydantic names in its error paths), and the value that came where another type belongs.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from .. import models
from ..errors import EvalFileError
from ..models import EVALUATOR_KINDS

_MODEL_NAMES = frozenset(name for module in (models, models.config, models.cases) for name, value in vars(module).items()
                         if isinstance(value, type) and issubclass(value, BaseModel))
"""Our model classes' names, which pydantic puts in an error's path for the union member it tried."""


def _is_union_branch(part: object) -> bool:
    """pydantic names the member of a union it tried in the error's path (`prompt.str`,
    `prompt.PromptScriptConfig.args`): our type names, not a key the user wrote."""
    return isinstance(part, str) and (part in ("str", "int", "float", "bool", "none") or "[" in part
                                      or part in _MODEL_NAMES)


def _user_path(loc: tuple[Any, ...]) -> list[str]:
    """The keys and positions the user wrote, without the evaluator kind and union members pydantic adds."""
    return [str(p) for p in loc if str(p) not in EVALUATOR_KINDS and not _is_union_branch(p)]


def _most_telling(errors: list[Any]) -> Any:
    """For a value that fit no member of a union, pydantic reports every member's complaint, the
    first usually "should be a valid string" about a mapping. A key the user wrote that is not
    allowed says most; else the complaint that went deepest into what the user wrote (`script.1`,
    the list's second item, rather than `script` as a whole)."""
    extra = next((e for e in errors if e["type"] == "extra_forbidden"), None)
    return extra if extra is not None else max(errors, key=lambda e: len(_user_path(e["loc"])))


def _pydantic_message(exc: ValidationError) -> tuple[str, str | None]:
    first = _most_telling(exc.errors())
    where = ".".join(_user_path(first["loc"]))
    if first["type"] == "extra_forbidden":
        return f"unknown key '{where}'", None
    msg = first["msg"]
    if first["type"] == "missing":
        return f"missing required field '{where}'", f"'{where}' to be set"
    return f"field '{where}': {msg}{written_value(first)}", None


def written_value(error: Any) -> str:
    """`, got '2'` for a scalar the file holds where another type belongs (`weight: "2"`): the message says
    what came, not only what was expected. Nothing for a mapping or list, whose repr says little."""
    value = error.get("input")
    if isinstance(value, bool):
        return f", got {str(value).lower()}"
    if isinstance(value, (str, int, float)) and len(repr(value)) <= 80:
        return f", got {value!r}"
    return ""


def validation_error(exc: ValidationError, line: int, where: str) -> EvalFileError:
    """The located error for an entry that does not validate: `where` names the evaluator (`code_judge
    evaluator 'n'`), `line` is where the entry is written."""
    message, expected = _pydantic_message(exc)
    return EvalFileError(line, f"{where}: {message}", expected)
