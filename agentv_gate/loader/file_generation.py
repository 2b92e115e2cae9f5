"""Which AgentV an eval file is written for (2.x or 4.x), decided by one rule, in this order:

1. what the repository says: `.agentv/gate.yaml`'s `agentv:` (the nearest between the file and the
   repository root), a per-glob `overrides` entry winning over its `version`:

   ```yaml
   agentv:
     version: "2.19"                 # every eval file of the repository
     overrides:
       - paths: ["evals/new/**"]     # repo-relative globs
         version: "4.42"
   ```

   then AgentV's own pins: `required_version` in `.agentv/config.yaml`, the suite's
   `requires: {agentv: ...}`, an `agentv` dependency in the repository's `package.json` (a semver
   range: its lowest major decides);
2. the keys only one generation reads: `assertions:`, `code-grader`, `llm-grader`, `min_score`,
   `governance`, ... (forms4.py) mean 4.x; `code_judge` / `llm_judge` mean 2.x. An unpinned file with signs
   of both is refused at the later one, both named: AgentV 2.19 reads no `assertions:` (its parser reads
   `assert` and `evaluators`), and AgentV 4.42 skips a `code_judge` / `llm_judge` with a warning
   (grader-parser.ts, `isDeprecatedJudgeType`), so neither AgentV runs the whole file as written;
3. nothing decides: `DEFAULT`.

The decision keeps its reason (`assertions: at line 3`), for `validate`, `run -v` and results rows.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..base.files import EscapingSymlinkError, nearest_agentv_file
from ..base.generations import Generation, is_4x_type
from ..base.problems import Problem
from .forms4 import SUITE_EXECUTION_KEYS_4X, SUITE_KEYS_4X
from .yaml_lines import key_line, line_of, load_yaml_text, read_text

DEFAULT: Generation = "4.x"
"""A sign-less, unpinned file's generation."""
SIGNS_2X = frozenset({"code_judge", "code-judge", "llm_judge", "llm-judge"})
"""Evaluator type names AgentV 4.42 no longer reads (it skips them): a file written for 2.x."""
KEYS_4X = frozenset({"assertions", "min_score", "vars", "preprocessors", *SUITE_KEYS_4X, *SUITE_EXECUTION_KEYS_4X})
"""Keys only AgentV 3.0+ reads."""
DATA_KEYS = frozenset({"config", "metadata", "input", "expected_output", "vars", "governance", "env", "value"})
"""Keys whose values are the author's data, never eval-file forms: not searched for signs."""


UNREAD_BY = {"4.x": "AgentV 2.19 does not read it", "2.x": "AgentV 4.42 skips it"}
"""Why a sign means its generation: what the other AgentV does with it."""
MIX_EXPECTED = "one generation's names, or the file's generation pinned in .agentv/gate.yaml (agentv: {version: \"4.42\"})"


def mix_message(first: tuple[Generation, int, str], second: tuple[Generation, int, str]) -> str:
    """The refusal of a file mixing both generations, each sign with its line and what it says."""
    said = ", ".join(f"{sign} (line {at}) is AgentV {generation} only ({UNREAD_BY[generation]})"
                     for generation, at, sign in sorted((first, second), key=lambda s: s[1], reverse=True))
    return f"this file mixes AgentV generations: {said}"


@dataclass(frozen=True)
class FileGeneration:
    generation: Generation
    reason: str
    pinned: bool = False
    """Decided by the repository (step 1): it wins over a form's own generation."""
    conflict: tuple[int, str] | None = None
    """(line, message) where the file mixes signs of both generations."""
    sign: tuple[int, str] | None = None
    """(line, sign) of the suite's own sign, when one decided."""

    def describe(self) -> str:
        return f"AgentV {self.generation} ({self.reason})"


def _generation_of_version(text: Any) -> Generation | None:
    """The generation a version or semver range names: its lowest major (`^2.19` 2.x, `>=4.0` 4.x)."""
    majors = [int(m) for m in re.findall(r"(?<![\d.])(\d+)(?:\.[\dxX*]+)*", str(text))]
    if not majors:
        return None
    return "2.x" if min(majors) < 3 else "4.x"


def _nearest(file: Path, names: tuple[str, ...], repo_root: Path) -> Path | None:
    """The project file that may pin the generation; one linked out of the repository pins nothing here, as it
    is refused, located, where the project's files are read for the run (project_config, quarantine)."""
    try:
        return nearest_agentv_file(file.parent, names, repo_root)
    except EscapingSymlinkError:
        return None


PIN_KEYS = {"version": "the AgentV version the files are written for, e.g. \"2.19\" or \"4.42\"",
            "overrides": "a list of {paths: [glob, ...], version: ...}, the first matching one winning"}
OVERRIDE_KEYS = {"paths": "a glob or a list of globs, relative to the repository root", "version": PIN_KEYS["version"]}


def pin_problems(section: Any, gate: Path, line: int) -> list[Problem]:
    """What in gate.yaml's `agentv:` pin cannot be read: a pin misread is every file read as the other
    AgentV without a word, so each is refused where it is written, never skipped."""
    if not isinstance(section, dict):
        return [Problem(gate, line, "agentv must be a mapping", "agentv: {version: \"2.19\"}")]
    problems = [Problem(gate, key_line(section, str(key), line), f"unknown key '{key}' in agentv", ", ".join(PIN_KEYS),
                        unknown_key=True) for key in section if key not in PIN_KEYS]
    problems += _version_problems(section, "agentv.version", gate, line)
    overrides = section.get("overrides")
    if overrides is not None and not isinstance(overrides, list):
        return [*problems, Problem(gate, key_line(section, "overrides", line), "agentv.overrides must be a list",
                                   PIN_KEYS["overrides"])]
    for entry in overrides or []:
        at = line_of(entry, key_line(section, "overrides", line))
        if not isinstance(entry, dict):
            problems.append(Problem(gate, at, "an agentv override must be a mapping", PIN_KEYS["overrides"]))
            continue
        problems += [Problem(gate, key_line(entry, str(key), at), f"unknown key '{key}' in an agentv override",
                             ", ".join(OVERRIDE_KEYS), unknown_key=True) for key in entry if key not in OVERRIDE_KEYS]
        problems += [Problem(gate, at, f"an agentv override needs '{key}'", OVERRIDE_KEYS[key])
                     for key in OVERRIDE_KEYS if key not in entry]
        problems += _version_problems(entry, "the override's version", gate, at)
    return problems


def _version_problems(where: dict[str, Any], name: str, gate: Path, line: int) -> list[Problem]:
    if "version" not in where or _generation_of_version(where["version"]) is not None:
        return []
    return [Problem(gate, key_line(where, "version", line), f"{name} {str(where['version'])!r} names no AgentV version",
                    PIN_KEYS["version"])]


def _gate_pin(file: Path, repo_root: Path) -> FileGeneration | None:
    gate = _nearest(file, ("gate.yaml", "gate.yml"), repo_root)
    if gate is None:
        return None
    try:
        data = load_yaml_text(read_text(gate))
    except Exception:  # noqa: BLE001 - its problems are reported by the gate config's own reader
        return None
    section = data.get("agentv") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return None
    try:
        relative = PurePosixPath(file.resolve().relative_to(repo_root.resolve()).as_posix())
    except ValueError:
        relative = PurePosixPath(file.as_posix())
    for entry in section.get("overrides") or []:
        if not isinstance(entry, dict):
            continue
        globs = entry.get("paths")
        globs = [globs] if isinstance(globs, str) else globs if isinstance(globs, list) else []
        hit = next((g for g in globs if isinstance(g, str)
                    and (relative.match(g) or fnmatch.fnmatchcase(str(relative), g))), None)
        generation = _generation_of_version(entry.get("version"))
        if hit is not None and generation is not None:
            return FileGeneration(generation, f"{gate.name} overrides {hit!r} at line {line_of(entry)}", pinned=True)
    generation = _generation_of_version(section.get("version"))
    if generation is None:
        return None
    return FileGeneration(generation, f"{gate.name} agentv.version at line {key_line(section, 'version')}", pinned=True)


def _agentv_pins(file: Path, header: Any, repo_root: Path) -> FileGeneration | None:
    config = _nearest(file, ("config.yaml", "config.yml"), repo_root)
    if config is not None:
        try:
            data = load_yaml_text(read_text(config))
        except Exception:  # noqa: BLE001 - reported by project_config
            data = None
        if isinstance(data, dict) and (generation := _generation_of_version(data.get("required_version"))):
            return FileGeneration(generation, f"required_version in .agentv/{config.name} at line "
                                  f"{key_line(data, 'required_version')}", pinned=True)
    requires = header.get("requires") if isinstance(header, dict) else None
    if isinstance(requires, dict) and (generation := _generation_of_version(requires.get("agentv"))):
        return FileGeneration(generation, f"requires.agentv at line {key_line(header, 'requires')}", pinned=True)
    package = repo_root / "package.json"
    try:
        data = json.loads(package.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for section in ("dependencies", "devDependencies", "peerDependencies"):
        deps = data.get(section) if isinstance(data, dict) else None
        if isinstance(deps, dict) and (generation := _generation_of_version(deps.get("agentv"))):
            return FileGeneration(generation, f"package.json {section}.agentv {deps['agentv']!r}", pinned=True)
    return None


def _first_signs(value: Any, line: int, found: dict[Generation, tuple[int, str]]) -> None:
    """The first sign of each generation in a parsed document, with its line."""
    if isinstance(value, dict):
        for key, item in value.items():
            at = key_line(value, str(key), line_of(value, line))
            if str(key) in KEYS_4X and "4.x" not in found:
                found["4.x"] = (at, f"{key}:")
            if key == "type" and isinstance(item, str):
                if is_4x_type(item) and "4.x" not in found:
                    found["4.x"] = (at, f"type: {item}")
                elif item in SIGNS_2X and "2.x" not in found:
                    found["2.x"] = (at, f"type: {item}")
            if str(key) not in DATA_KEYS:
                _first_signs(item, at, found)
    elif isinstance(value, list):
        for item in value:
            _first_signs(item, line_of(item, line), found)


def decide(file: Path, header: Any, repo_root: Path) -> FileGeneration:
    """The generation `file` (whose parsed settings and inline tests are `header`) is read as, and why."""
    pinned = _gate_pin(file, repo_root) or _agentv_pins(file, header, repo_root)
    if pinned is not None:
        return pinned
    found: dict[Generation, tuple[int, str]] = {}
    _first_signs(header, 1, found)
    if "4.x" in found and "2.x" in found:
        (l4, s4), (l2, s2) = found["4.x"], found["2.x"]
        return FileGeneration("4.x" if l4 < l2 else "2.x", "mixed", conflict=(
            max(l4, l2), mix_message(("4.x", l4, s4), ("2.x", l2, s2))))
    for generation in ("4.x", "2.x"):
        if generation in found:
            at, sign = found[generation]
            return FileGeneration(generation, f"{sign} at line {at}", sign=(at, sign))
    return FileGeneration(DEFAULT, "no pin and no form of one generation: the default")


class GenerationTracker:
    """One file's decision as its cases stream by: the suite's (pin or settings' sign) wins; else the first
    case's sign decides for every case. Unpinned, a sign of the other generation (in the same case or a later
    one) is the conflict the loader refuses, at that sign's line."""

    def __init__(self, suite: FileGeneration) -> None:
        self.suite = suite
        self.sign: tuple[Generation, int, str] | None = None
        self.decided_by_suite = suite.pinned or not suite.reason.startswith("no pin")

    def for_case(self, raw: Any, line: int) -> tuple[FileGeneration, tuple[int, str] | None]:
        """The case's generation, and (line, message) when, unpinned, it brings in the other generation's sign."""
        found: dict[Generation, tuple[int, str]] = {}
        _first_signs(raw, line, found)
        if self.suite.pinned:
            return self.suite, None
        if self.decided_by_suite:
            other: Generation = "2.x" if self.suite.generation == "4.x" else "4.x"
            if other in found and self.suite.sign is not None:
                at, sign = found[other]
                return self.suite, (at, mix_message((other, at, sign), (self.suite.generation, *self.suite.sign)))
            return self.suite, None
        if "4.x" in found and "2.x" in found:
            (l4, s4), (l2, s2) = found["4.x"], found["2.x"]
            return (FileGeneration("2.x", f"{s2} at line {l2}"),
                    (max(l4, l2), mix_message(("4.x", l4, s4), ("2.x", l2, s2))))
        for generation, (at, sign) in found.items():
            if self.sign is None:
                self.sign = (generation, at, sign)
            elif self.sign[0] != generation:
                return (FileGeneration(self.sign[0], f"{self.sign[2]} at line {self.sign[1]}"),
                        (at, mix_message((generation, at, sign), self.sign)))
        if self.sign is not None:
            return FileGeneration(self.sign[0], f"{self.sign[2]} at line {self.sign[1]}"), None
        return self.suite, None
