"""AgentV 4.42's `preprocessors:` (a suite's, or a grader's own), read as its grader-parser reads them.

Each entry is `{type, command}`: `type` a media type or its short name (`xlsx`), `command` a list of argv words
whose last word names a file, looked for as AgentV looks for it (the eval file's folder, each parent up to the
repository root, the root) and run with that word replaced by the file found. AgentV refuses an entry that is
not a mapping, has no `type`, has a `command` that is not a list of words, or names a file it cannot find; so
does the gate, at the entry's line, and a file outside the repository too (unless the run allows it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..base.key_checks import did_you_mean
from ..errors import EvalFileError
from ..models import PreprocessorConfig, merged_preprocessors
from ..models.config import EvaluatorConfig
from .refs import SearchRoots
from .yaml_lines import item_line, key_line, line_of, yaml_kind

ENTRY_KEYS = ("type", "command")
"""What AgentV reads of an entry (its schema's `PreprocessorSchema`)."""
EXPECTED = "preprocessors: [{type: xlsx, command: [python3, scripts/xlsx_to_csv.py]}]"


def parse_preprocessors(raw: Any, line: int, roots: SearchRoots, file: Path, where: str) -> list[PreprocessorConfig]:
    """The entries of a `preprocessors:` value written at `line`, each checked and its command's file found."""
    if not isinstance(raw, list):
        raise EvalFileError(line_of(raw, line), f"{where}: preprocessors must be a list, got {yaml_kind(raw)}", EXPECTED)
    entries: list[PreprocessorConfig] = []
    for index, entry in enumerate(raw):
        at = item_line(raw, index, line)
        if not isinstance(entry, dict):
            raise EvalFileError(at, f"{where}: each preprocessor must be a mapping, got {yaml_kind(entry)}", EXPECTED)
        at = line_of(entry, at)
        for key in entry:
            if key not in ENTRY_KEYS:
                raise EvalFileError(key_line(entry, key, at), f"{where}: unknown key {str(key)!r} in a preprocessor"
                                    f"{did_you_mean(str(key), ENTRY_KEYS)}", "type and command")
        kind = entry.get("type")
        if not isinstance(kind, str) or not kind.strip():
            raise EvalFileError(key_line(entry, "type", at), f"{where}: preprocessor.type is required (a media type "
                                "or a short name such as xlsx)", "type: xlsx")
        kind = kind.strip()
        command_at = key_line(entry, "command", at)
        command = entry.get("command")
        if command is None:
            raise EvalFileError(at, f"{where}: preprocessor '{kind}' requires command", EXPECTED)
        if not isinstance(command, list) or not command:
            raise EvalFileError(command_at, f"{where}: preprocessor '{kind}': command must be a list of argv words "
                                f"(AgentV reads no command line here), got {yaml_kind(command)}",
                                "command: [python3, scripts/convert.py]")
        for number, word in enumerate(command):
            if not isinstance(word, str) or not word.strip():
                raise EvalFileError(item_line(command, number, command_at), f"{where}: preprocessor '{kind}': "
                                    f"command[{number}] must be a word, got {word!r}", "a non-empty string")
        found = roots.resolve(command[-1], command_at, f"{where}: preprocessor '{kind}' command file")
        entries.append(PreprocessorConfig(type=kind, command=list(command),
                                          resolved_command=[*command[:-1], str(found)],
                                          source_file=file, source_line=at))
    return entries


def with_suite_preprocessors(configs: list[EvaluatorConfig], suite: list[PreprocessorConfig]) -> list[EvaluatorConfig]:
    """Each 4.x llm-grader of a list with the suite's preprocessors merged under its own (AgentV hands the suite's
    to every grader of a test and of the suite's own list; a composite's members get none of them)."""
    if not suite:
        return configs
    return [config.model_copy(update={"preprocessors": merged_preprocessors(suite, getattr(config, "preprocessors", None))})
            if reads_preprocessors(type(config), getattr(config, "generation", None)) else config for config in configs]


def reads_preprocessors(config_class: type[Any], generation: str | None) -> bool:
    """Whether an evaluator of this class and generation reads the answer through preprocessors: those whose
    config has the field (AgentV 4.42's llm-grader), in their 4.x reading."""
    return "preprocessors" in getattr(config_class, "model_fields", {}) and generation == "4.x"
