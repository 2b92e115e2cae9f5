"""`${{ VAR }}` in eval and case files, and the `.env` file a run reads first, as AgentV 2.19 has them.

AgentV replaces `${{ NAME }}` (spaces optional) in every string of an eval file or external case
file with the environment's value, the empty string when the variable is unset, several per string
allowed; numbers and booleans are left alone. Before that it loads the nearest `.env` file, looking
in the first eval file's folder, each parent up to the repository root, the root, then the working
folder, with dotenv's rule: a variable already set in the environment is never overridden.

A variable named like a secret (`*_KEY`, `*_TOKEN`, `*_PASSWORD`, ...) has its value registered
with `redaction`, so it is hidden from every output, as a targets.yaml secret is.

Interpolation keeps the loader's line numbers (`LineDict`/`LineList`), so a problem in an
interpolated value is still reported where it is written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..redaction import is_secret_field, register_secrets
from .discover import discover_eval_files
from .refs import find_repo_root
from .yaml_lines import LineDict, LineList

ENV_REF = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _value(name: str, source: Mapping[str, str]) -> str:
    """The variable's value, '' when unset. A variable named like a secret (`SUPPORT_API_TOKEN`,
    `DB_PASSWORD`: `redaction.is_secret_field`) is a secret wherever it is read: its value is
    registered, so every output of the run hides it, as it hides targets.yaml secrets."""
    value = source.get(name, "")
    if value and is_secret_field(name):
        register_secrets([value])
    return value


def interpolate(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """`value` with every `${{ NAME }}` in its strings replaced; unset names become ''. A mapping or list
    holding no reference comes back as it is, not copied: most hold none, and every JSONL line and case
    folder is read through here (a YAML list's cases are replaced as they are unpacked)."""
    return _interpolated(value, os.environ if env is None else env)


def _interpolated(value: Any, source: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        if "${{" not in value:
            return value
        return ENV_REF.sub(lambda m: _value(m.group(1), source), value)
    if isinstance(value, dict):
        changed = {key: new for key, item in value.items() if (new := _interpolated(item, source)) is not item}
        if not changed:
            return value
        out = LineDict(value)
        out.update(changed)
        out.line = getattr(value, "line", 1)
        out.key_lines = getattr(value, "key_lines", {})
        return out
    if isinstance(value, list):
        items = [_interpolated(item, source) for item in value]
        if all(new is item for new, item in zip(items, value, strict=True)):
            return value
        seq = LineList(items)
        seq.line = getattr(value, "line", 1)
        seq.item_lines = getattr(value, "item_lines", [])
        return seq
    return value


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$")


def parse_dotenv(text: str) -> dict[str, str]:
    """dotenv's format: `NAME=value`, `export NAME=value`, `#` comments, single or double quotes
    (double quotes expand `\\n`), an unquoted value ends at ` #`. Lines that are none of these are skipped."""
    values: dict[str, str] = {}
    lines = text.replace("\r\n", "\n").split("\n")
    index = 0
    while index < len(lines):
        match = _DOTENV_LINE.match(lines[index])
        index += 1
        if match is None:
            continue
        name, raw = match.group(1), match.group(2)
        quote = raw[:1]
        if quote in ("'", '"', "`"):
            body = raw[1:]
            # A quoted value may run over several lines, up to its closing quote.
            while quote not in body and index < len(lines):
                body += "\n" + lines[index]
                index += 1
            value = body[: body.index(quote)] if quote in body else body
            if quote == '"':
                value = value.replace("\\n", "\n").replace("\\r", "\r")
        else:
            value = re.split(r"\s+#", raw, maxsplit=1)[0].strip()
        values[name] = value
    return values


def find_dotenv(first_eval_file: Path, repo_root: Path, allow_outside_root: bool = False) -> Path | None:
    """The `.env` AgentV loads: the nearest one from the first eval file's folder up to the
    repository root, then the root, then the working folder.

    One found inside the repository that resolves outside it (a committed symlink) is refused, as
    every other reference of an eval file is, unless `allow_outside_root`: its values would reach
    prompts and results. A working folder outside the repository was chosen on the command line,
    so its `.env` is read as AgentV reads it."""
    start = first_eval_file.resolve().parent
    root = repo_root.resolve()
    folders = [start]
    if start == root or root in start.parents:
        folders += [parent for parent in start.parents if parent == root or root in parent.parents]
    folders += [root, Path.cwd().resolve()]
    for folder in dict.fromkeys(folders):
        candidate = folder / ".env"
        if candidate.is_file():
            real = candidate.resolve()
            inside = folder == root or root in folder.parents
            if inside and not allow_outside_root and real != root and root not in real.parents:
                raise ConfigError(f"{candidate}: this .env resolves outside the repository root ({real}); "
                                  "expected a file inside it (or run with --allow-outside-root)")
            return candidate
    return None


def load_dotenv(path: Path, environ: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """Set the file's variables that the environment does not have yet; the names set, in order.

    The environment wins, as with dotenv's `override: false`: CI secrets are never replaced by a
    committed or stale `.env`. The process environment is changed, as AgentV's is, so targets,
    judges and agents started by the run see the same variables.
    """
    target = os.environ if environ is None else environ
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read this .env file: {exc}") from None
    added = []
    for name, value in parse_dotenv(text).items():
        if name not in target:
            target[name] = value
            added.append(name)
    return added


def load_run_dotenv(paths: list[Path], repo_root: Path | None, allow_outside_root: bool = False) -> str | None:
    """Before a run (or `validate`) reads its suites, the `.env` found for its first eval file is
    loaded; what it set, as a line for the user, or None when it set nothing."""
    files, _ = discover_eval_files(paths)
    if not files:
        return None
    found = find_dotenv(files[0], repo_root or find_repo_root(files[0].parent), allow_outside_root)
    names = load_dotenv(found) if found is not None else []
    return f"{len(names)} variable(s) set from {found}" if names else None


__all__ = ["ENV_REF", "find_dotenv", "interpolate", "load_dotenv", "load_run_dotenv", "parse_dotenv"]
