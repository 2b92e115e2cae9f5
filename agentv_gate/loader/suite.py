"""One eval file -> its suite settings and its cases, one case at a time, every problem located.

The loader never raises for bad content: a broken case becomes a `Problem` and the file's
other cases still load, so one typo cannot hide the rest of a suite's results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.key_checks import closest
from ..base.problems import FoundProblems, Problem, no_effect
from ..errors import EvalFileError
from ..models import EvalCase, PreprocessorConfig, merged_preprocessors
from ..yaml_reader import CaseList
from .case_folders import FolderCase, folder_cases, has_case_folders
from .case_globs import NoMatch, glob_case_files, is_glob
from .cases import CaseBuilder, mapping, parse_threshold
from .dependencies import Dependencies, graph_problems
from .documents import Documents
from .env import interpolate
from .eval_file_keys import CASE_LIST_KEYS, SUITE_EXECUTION_KEYS, SUITE_KEYS, declared, key_problems, one_of_problems
from .evaluator_parser import parse_evaluators
from .execution_settings import (
    BLANK_TARGET,
    blank_target_line,
    budget_name,
    parse_input_files,
    parse_targets,
    parse_trials,
    parse_workspace,
    suite_execution,
    written_twice_problems,
)
from .file_generation import MIX_EXPECTED
from .file_generation import decide as decide_generation
from .forms4 import header_is_4x, suite_metadata_payload
from .preprocessors import parse_preprocessors, with_suite_preprocessors
from .project_config import guideline_patterns_for
from .refs import SearchRoots, find_repo_root
from .yaml_lines import LineDict, iter_jsonl_rows, key_line, line_of, yaml_kind

FILE_PREFIX = "file://"
"""AgentV's mark for a case-list entry (or `tests:` value) that names a file of cases to load in its place."""


@dataclass
class LoadResult(FoundProblems):
    cases: list[EvalCase] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def default_dataset(file: Path) -> str:
    """AgentV's dataset name for a suite without `dataset:`: the file name without `.yaml`
    (`probe.eval.yaml` -> `probe.eval`), or without `.yml` / `.jsonl`."""
    name = file.name
    for suffix in (".yaml", ".yml", ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _suite_name(file: Path, repo_root: Path) -> str:
    try:
        return str(file.resolve().relative_to(repo_root.resolve()))
    except ValueError:
        return str(file)


Entries = Iterator[tuple[int, Any]]
"""(line, raw case or the EvalFileError that stands for it) for each entry of a case list, its
`${{ VAR }}`s replaced (`env.interpolate`): AgentV replaces them in the whole file before it reads
a case or follows a `file://` entry."""


def _interpolated_rows(rows: Entries) -> Entries:
    for line, row in rows:
        yield line, row if isinstance(row, EvalFileError) else interpolate(row)


def _yaml_entries(doc: Any) -> tuple[dict[str, Any], Callable[[], Entries]] | None:
    """(header, entries) of a YAML suite as `Documents.suite` read it; None when it holds no case list."""
    if isinstance(doc, CaseList):
        return {"tests": doc}, lambda: doc.entries(text=interpolate)
    if not isinstance(doc, dict):
        return None
    merges = header_is_4x(doc)  # AgentV 4.23+ merges `<<` keys; a 2.x file's are refused (yaml12.py says why)
    for key in CASE_LIST_KEYS:
        cases = doc.get(key)
        if isinstance(cases, CaseList):
            return doc, lambda cases=cases: cases.entries(merge_keys=merges, text=interpolate)
    return None


def open_entries(header: Any) -> Entries:
    """The entries of the case list written in a YAML suite itself (`header`, as `Documents.suite`
    read it), without following `tests: ./cases.yaml`; none when it holds no list."""
    found = _yaml_entries(header)
    return found[1]() if found is not None else iter(())


def jsonl_sidecar(file: Path) -> Path | None:
    """The YAML file holding a JSONL suite's settings (`set.yaml` beside `set.jsonl`), if there is one."""
    sidecar = file.with_suffix(".yaml")
    return sidecar if sidecar.exists() else None


def unread_sidecars(file: Path) -> list[Path]:
    """Files beside a JSONL suite that look like its sidecar but that AgentV 2.19 never reads: its loader
    reads `<name>.yaml` only, so the settings of `set.yml` or `set.eval.yaml` (evaluators among them) apply
    to none of the cases there. They were read here as the sidecar."""
    return [other for other in (file.with_suffix(".yml"), file.with_name(file.stem + ".eval.yaml")) if other.exists()]


def _open_suite(file: Path, roots: SearchRoots, documents: Documents) -> tuple[dict[str, Any], Callable[[], Entries]]:
    """Suite-level settings, and a reader of the raw cases one at a time (never the whole list)."""
    if file.suffix == ".jsonl":
        text = documents.text(file)
        sidecar = jsonl_sidecar(file)
        header: dict[str, Any] = {}
        if sidecar is not None:
            meta = documents.document(sidecar)
            if isinstance(meta, dict):
                header = meta
        return header, lambda: _interpolated_rows(iter_jsonl_rows(text))
    doc = documents.suite(file)
    if doc is None:
        raise EvalFileError(1, "the file is empty", "a mapping with 'tests' (or 'evalcases') or a list of cases")
    if not isinstance(doc, (dict, CaseList)):
        raise EvalFileError(line_of(doc), f"top level is {yaml_kind(doc)}", "a mapping with 'tests' or 'evalcases'")
    found = _yaml_entries(doc)
    if found is not None:
        return found
    assert isinstance(doc, dict)
    for key in CASE_LIST_KEYS:
        if key not in doc:
            continue
        cases = doc[key]
        if isinstance(cases, str) and key == "tests":
            # AgentV 3+ (`tests:`): `tests: ./cases.jsonl` (or `file://cases.jsonl`) names an external case file.
            at = key_line(doc, key)
            cases = interpolate(cases).removeprefix(FILE_PREFIX)  # AgentV replaces ${{ VAR }} before it reads the path
            folder = _case_folder(cases, at, roots)
            if folder is not None:
                return doc, functools.partial(folder_cases, folder, at)
            external = roots.resolve(cases, at, "tests file")
            return doc, _listed_cases(external, at, f"tests file {cases!r}", "a list of cases", documents)
        raise EvalFileError(line_of(cases, key_line(doc, key)), f"'{key}' must be a list of cases", "a YAML list")
    raise _no_case_list(doc)


def _names_folder(eval_dir: Path, ref: str) -> bool:
    try:
        return (eval_dir / ref.removeprefix(FILE_PREFIX)).is_dir()
    except (OSError, ValueError):
        return False


def _case_folder(ref: str, line: int, roots: SearchRoots) -> Path | None:
    """The folder `tests:` names (4.x: a folder of case folders), relative to the eval file as 4.42 resolves it;
    None when it names no folder (then it is a case file)."""
    folder = roots.eval_dir / ref
    try:
        if not folder.is_dir():
            return None
        if not roots.allow_outside_root and not roots.inside_root(folder):
            raise EvalFileError(line, f"tests folder {ref!r} resolves outside the repository root ({folder.resolve()})",
                                f"a path inside {roots.repo_root} (or run with --allow-outside-root)")
        if not has_case_folders(folder):
            raise EvalFileError(line, f"tests folder {ref!r} holds no case folder, so no case would run",
                                "sub-folders each holding a case.yaml")
    except (OSError, ValueError, RuntimeError):  # a name too long, a symlink loop: left to the file lookup
        return None
    return folder


CASE_LIST_SPELLINGS = {"cases": "tests", "test": "tests", "testcases": "tests", "test_cases": "tests",
                       "examples": "tests", "evals": "tests", "eval_case": "eval_cases", "evalcase": "evalcases"}
"""Top-level lists people write for the case list: AgentV reads only `tests` (what it writes today)
or 2.x's `evalcases` / `eval_cases`."""


def _no_case_list(doc: dict[str, Any]) -> EvalFileError:
    """No case list: at the key that was probably meant as one (`cases:`), saying which AgentV reads."""
    expected = "a top-level 'tests', 'evalcases' or 'eval_cases' list"
    for key in doc:
        name = str(key)
        meant = CASE_LIST_SPELLINGS.get(name.lower()) or closest(name, CASE_LIST_KEYS)
        if meant:
            return EvalFileError(key_line(doc, name), f"no list of cases found: '{name}' is not a case list AgentV "
                                 f"reads (did you mean '{meant}'?)", expected)
    return EvalFileError(1, "no list of cases found", expected)


def _included(ref: str, line: int, roots: SearchRoots, documents: Documents) -> tuple[Path, Entries]:
    """The cases of a `- file://cases/more.yaml` entry: (that file, its entries). A YAML file holds a
    list of cases (or a mapping with one); a JSONL file one case per line."""
    path_text = ref[len(FILE_PREFIX):].strip()
    if not path_text:
        raise EvalFileError(line, f"{ref!r} names no file", "file://path/to/cases.yaml")
    path = roots.resolve(path_text, line, "case file")
    return path, _listed_cases(path, line, f"case file {ref!r}", "a YAML list of cases", documents)()


def _listed_cases(path: Path, line: int, named: str, expected: str, documents: Documents) -> Callable[[], Entries]:
    """The cases a file named by a suite lists (a `tests:` file, a `file://` entry): a YAML list of
    cases, or a JSONL file of one case per line. A problem in it is reported at `line` of the suite that
    names it, `named` saying which file and its own line. A mapping holding a case list is refused, as
    AgentV refuses it: its other keys (an `assert`, a `threshold`) would be read by no one."""
    if path.suffix == ".jsonl":
        text = documents.text(path)
        return lambda: _interpolated_rows(iter_jsonl_rows(text))
    try:
        header = documents.suite(path)
        listed = _yaml_entries(header)
    except EvalFileError as exc:
        raise EvalFileError(line, f"{named}: line {exc.line}: {exc.message}", exc.expected) from None
    if listed is None:
        raise EvalFileError(line, f"{named} holds no list of cases", expected)
    if not isinstance(header, CaseList):
        raise EvalFileError(line, f"{named} is a mapping: a case file is a YAML list of cases (AgentV 2.19 refuses "
                                  "any other, and the mapping's other keys would be read by no one)",
                            "the file as a list: - id: ...")
    return listed[1]


def _expanded(entries: Entries, file: Path, roots: SearchRoots, documents: Documents) -> Iterator[tuple[Path, int, Any]]:
    """(file the case is written in, line, raw case) for each entry, a `file://` entry replaced by
    the cases of the file it names, in place. A broken reference stands in as its EvalFileError."""
    for line, raw in entries:
        if isinstance(raw, FolderCase):
            yield raw.file, line, interpolate(raw.raw)
            continue
        if not (isinstance(raw, str) and raw.startswith(FILE_PREFIX)) or file.suffix == ".jsonl":
            yield file, line, raw  # a JSONL line is a case object: AgentV follows `file://` in YAML lists only
            continue
        path_text = raw[len(FILE_PREFIX):].strip()
        try:
            globbed = glob_case_files(path_text, line, roots) if is_glob(path_text) else None
        except EvalFileError as exc:
            yield file, line, exc
            continue
        try:
            for included, rows in ([_included(raw, line, roots, documents)] if globbed is None else
                                   ((match, _listed_cases(match, line, f"case file {str(match)!r} (matched by {raw!r})",
                                                          "a YAML list of cases", documents)()) for match in globbed)):
                for row_line, row in rows:
                    yield included, row_line, row
        except EvalFileError as exc:
            if exc.line != line:  # raised inside the case file: say where in it
                exc = EvalFileError(line, f"case file {raw!r}: line {exc.line}: {exc.message}", exc.expected)
            yield file, line, exc


def iter_eval_file(file: Path, problems: list[Problem], repo_root: Path | None = None,
                   allow_outside_root: bool = False, documents: Documents | None = None) -> Iterator[tuple[int, EvalCase]]:
    """(position in the file's case list, case) for each case that builds; problems are appended as found.

    Cases are built and handed over one at a time, so a suite of any size costs the memory of one
    case (and of the ids seen, for the duplicate check) beside its packed text. `${{ VAR }}` is
    replaced in the suite's settings and in each case as it is read (`env.interpolate`). The files
    are read through `documents` (a run's, so that each is read once per run; a new one otherwise).
    """
    documents = documents or Documents()
    root = repo_root or find_repo_root(file.parent)
    roots = SearchRoots(eval_dir=file.resolve().parent, repo_root=root.resolve(), allow_outside_root=allow_outside_root,
                        guideline_patterns=guideline_patterns_for(file, root))
    suite = _suite_name(file, root)
    try:
        header, entries = _open_suite(file, roots, documents)
    except EvalFileError as exc:
        problems.append(Problem(file, exc.line, exc.message, exc.expected))
        return
    header = interpolate(header)
    # A JSONL suite's settings are in its sidecar: their problems are located there.
    settings_file = (jsonl_sidecar(file) or file) if file.suffix == ".jsonl" else file
    sidecar_evaluators: str | None = None
    if file.suffix == ".jsonl":
        problems.extend(Problem(other, 1, f"{other.name} is not read as the sidecar of {file.name}: AgentV 2.19 reads "
                                f"a JSONL suite's settings from {file.with_suffix('.yaml').name} only",
                                f"the settings in {file.with_suffix('.yaml').name}") for other in unread_sidecars(file))
    if settings_file != file:
        problems.extend(Problem(settings_file, key_line(header, key), f"'{key}' in the sidecar of {file.name} is "
                                "never read: a JSONL suite's cases are its lines", f"the cases as lines of {file.name}")
                        for key in CASE_LIST_KEYS if key in header)
        header = _sidecar_settings(header, settings_file, file, problems)
        execution = header.get("execution")
        if isinstance(execution, dict) and execution.get("evaluators") is not None:
            sidecar_evaluators = f"{settings_file.name}:{key_line(execution, 'evaluators')}"
    else:
        lists = [key for key in CASE_LIST_KEYS if key in header]
        problems.extend(Problem(file, key_line(header, key), f"'{key}' is never read: '{lists[0]}' (line "
                                f"{key_line(header, lists[0])}) is the suite's case list, and AgentV reads only the "
                                f"first of {', '.join(CASE_LIST_KEYS)}", "one case list") for key in lists[1:])
    defaults = _suite_defaults(header, roots, settings_file, problems)
    builders = {file: CaseBuilder(file, suite, roots, defaults, problems)}
    seen: dict[str, tuple[Path, int]] = {}
    graph: list[Dependencies] = []
    count = 0
    try:
        for index, (source, line, raw) in enumerate(_expanded(entries(), file, roots, documents)):
            count += 1
            try:
                if isinstance(raw, NoMatch):
                    problems.append(Problem(source, raw.line, raw.message, raw.expected, severity="warning"))
                    count -= 1
                    continue
                if isinstance(raw, EvalFileError):
                    raise raw
                if sidecar_evaluators is not None and isinstance(raw, dict) and isinstance(raw.get("execution"), dict):
                    raise _own_execution(raw, line, sidecar_evaluators)
                builder = builders.get(source)
                if builder is None:  # a file:// case file: its cases keep their own file and lines
                    builder = builders[source] = CaseBuilder(source, suite, roots, defaults, problems, suite_file=file)
                case = builder.build(raw, index, line)
            except EvalFileError as exc:
                problems.append(Problem(source, exc.line, exc.message, exc.expected))
                continue
            if case.id in seen:
                first_file, first_line = seen[case.id]
                where = f"line {first_line}" if first_file == source else f"{first_file}:{first_line}"
                problems.append(Problem(source, case.source_line, f"duplicate case id '{case.id}' (first at {where})",
                                        "unique case ids within a file"))
                continue
            seen[case.id] = (source, case.source_line)
            graph.append(Dependencies(case.id, tuple(case.depends_on), source,
                                      key_line(raw, "depends_on", case.source_line) if isinstance(raw, dict)
                                      else case.source_line))
            yield index, case
    except EvalFileError as exc:  # the file itself broke off (malformed YAML past the header)
        problems.append(Problem(file, exc.line, exc.message, exc.expected))
        return
    if any(entry.depends_on for entry in graph):
        problems.extend(graph_problems(graph))
    if not count and not any(p.file == file for p in problems):
        problems.append(Problem(file, 1, "the file has no cases", "at least one case", severity="warning"))


JSONL_SIDECAR_UNREAD = ("assertions", "assert", "evaluators", "input", "input_files")
"""Suite settings AgentV 2.19's JSONL loader never reads from a sidecar (it reads `name`, `description`,
`execution` and `evaluator`): assertions or input there reach none of its cases in AgentV."""


SIDECAR_TARGET_KEYS = ("target", "execution.target", "execution.targets")
"""A JSONL sidecar's target choices: AgentV 2.19 and 4.42 read a suite's target from the suite file itself
(a JSONL file has none), so every case runs on `default` (or `--target`) whatever the sidecar names."""
SIDECAR_ASSERTION_LISTS = ("assertions", "assert", "evaluators")
"""The sidecar `execution` lists AgentV 4.42's `parseGraders` reads as every case's defaults, first found
wins (2.19 reads only `evaluators`); read here as `execution.evaluators`."""


def _sidecar_settings(header: Any, sidecar: Path, file: Path, problems: list[Problem]) -> Any:
    """A JSONL sidecar's settings without those AgentV would not apply, each refused at its line: a case
    scored with suite assertions AgentV never adds to it is scored as AgentV never scores it. A target the
    sidecar names is dropped with a located warning (AgentV runs `default`); `execution.assertions` is
    read as AgentV 4.42 reads it."""
    unread = [key for key in JSONL_SIDECAR_UNREAD if key in header]
    problems.extend(Problem(sidecar, key_line(header, key), f"'{key}' in the sidecar of {file.name} is never read by "
                            "AgentV 2.19, which reads only name, description, execution and evaluator from a JSONL "
                            "sidecar", "assertions in each line's 'assert', or the sidecar's 'execution: "
                                       "{assertions: [...]}'") for key in unread)
    execution = header.get("execution")
    ignored = ["target"] if "target" in header else []
    lists: list[str] = []
    if isinstance(execution, dict):
        ignored.extend(f"execution.{key}" for key in ("target", "targets") if key in execution)
        lists = [key for key in SIDECAR_ASSERTION_LISTS if execution.get(key) is not None]
    for key in ignored:
        holder, name = (execution, key.split(".")[1]) if key.startswith("execution.") else (header, key)
        problems.append(no_effect(sidecar, key_line(holder, name), key, f"AgentV reads a suite's target from the suite "
                                  f"file, never from the sidecar of {file.name}: its cases run on 'default' (or "
                                  "--target)", "the target with --target, or 'execution.target' on each line"))
    problems.extend(no_effect(sidecar, key_line(execution, key), f"execution.{key}", f"AgentV 4.42 reads the first of "
                              f"execution.assertions, execution.assert, execution.evaluators: 'execution.{lists[0]}' "
                              f"(line {key_line(execution, lists[0])}) is read, this one never")
                    for key in lists[1:])
    if not unread and not ignored and lists[:1] in ([], ["evaluators"]):
        return header
    kept = LineDict((key, value) for key, value in header.items() if key not in unread and key != "target")
    kept.line, kept.key_lines = line_of(header), getattr(header, "key_lines", {})
    if isinstance(execution, dict):
        new = LineDict((key, value) for key, value in execution.items()
                       if key not in ("target", "targets", *SIDECAR_ASSERTION_LISTS))
        new.line, new.key_lines = line_of(execution), dict(getattr(execution, "key_lines", {}))
        if lists:
            new["evaluators"] = execution[lists[0]]
            new.key_lines["evaluators"] = key_line(execution, lists[0])
        kept["execution"] = new
    return kept


def _own_execution(raw: Any, line: int, sidecar_evaluators: str) -> EvalFileError:
    """AgentV reads a JSONL case's `execution` as `case ?? sidecar`: a case writing its own (for trials, say)
    gets none of the sidecar's evaluators there, and appending them here scored it on checks AgentV never runs."""
    name = raw.get("id", raw.get("eval_id"))
    who = f"case {name!r}" if isinstance(name, str) else "this case"
    return EvalFileError(key_line(raw, "execution", line),
                         f"{who} has its own 'execution', which in AgentV 2.19 replaces the sidecar's whole "
                         f"'execution': the sidecar's evaluators ({sidecar_evaluators}) would not apply to it",
                         "the case's evaluators in its own 'assert', or no 'execution' on the case")


def load_eval_file(file: Path, repo_root: Path | None = None, allow_outside_root: bool = False) -> LoadResult:
    """Every case of one file, as a list (tests and small tools; a run streams them instead)."""
    result = LoadResult(files=[file])
    result.cases = [case for _, case in iter_eval_file(file, result.problems, repo_root, allow_outside_root)]
    return result


SUITE_NO_EFFECT = {
    "evaluatorTemplate": "AgentV 2.19 reads an LLM judge's template from the judge's own 'prompt' and never "
                         "this suite-level key (named in older AgentV documents)",
    "defaults": "no AgentV reads a suite's 'defaults' (AgentV 4.42 ignores it with a warning); YAML anchors "
                "written in it (&name) still reach the tests that use them (*name)",
}
"""Suite keys AgentV accepts and never reads: a warning each (`--strict`: an error), never a refusal."""


def _suite_defaults(header: dict[str, Any], roots: SearchRoots, file: Path, problems: list[Problem]) -> dict[str, Any]:
    """Settings every case inherits. AgentV 3+ (`tests`, and JSONL) appends suite assertions to each
    case; AgentV 2.x (`evalcases`) uses suite evaluators only for cases without their own. Keys nobody
    reads are reported, never dropped."""
    problems.extend(no_effect(file, key_line(header, key), key, why) for key, why in SUITE_NO_EFFECT.items()
                    if key in header)
    decided = decide_generation(file, header, roots.repo_root)  # the whole document: its inline tests too
    if decided.conflict is not None:
        problems.append(Problem(file, decided.conflict[0], decided.conflict[1], MIX_EXPECTED))
    problems.extend(key_problems(header, (*SUITE_KEYS, *SUITE_NO_EFFECT), "suite", "the suite", file))
    problems.extend(key_problems(header.get("execution"), SUITE_EXECUTION_KEYS, "execution", "the suite's 'execution'",
                                 file))
    problems.extend(written_twice_problems(header, header.get("execution"), "the suite", file))
    blank = blank_target_line(header, header.get("execution"))
    if blank is not None:
        problems.append(Problem(file, blank, BLANK_TARGET, "target: a name in targets.yaml, or no 'target' for the default"))
    problems.extend(one_of_problems(header, "the suite", file, test=False))
    schema = header.get("$schema")
    if "$schema" in header and not (isinstance(schema, str) and schema.startswith("agentv-eval")):
        problems.append(Problem(file, key_line(header, "$schema"), f"'$schema' is {schema!r}, not an eval file's schema",
                                "agentv-eval-v2, or no '$schema'"))
    problems.extend(_metadata_problems(header, file))
    header = declared(header, SUITE_KEYS)
    execution = declared(mapping(header.get("execution")), SUITE_EXECUTION_KEYS)
    generation = 2 if ("evalcases" in header or "eval_cases" in header) else 3
    dataset = header.get("dataset")
    if dataset is not None and (not isinstance(dataset, str) or not dataset.strip()):
        problems.append(Problem(file, key_line(header, "dataset"), f"'dataset' must be a name, got {dataset!r}",
                                "dataset: my-suite"))
        dataset = None
    tests_ref = header.get("tests")  # a folder of case folders is a form only AgentV 4.x reads
    four_x = header_is_4x(header) or (isinstance(tests_ref, str) and _names_folder(file.parent, tests_ref))
    problems.extend(_forms4_problems(header, file))
    tags = header.get("tags")
    defaults: dict[str, Any] = {
        "generation": generation,
        "four_x": four_x,
        "file_generation": decided,
        "metadata_payload": suite_metadata_payload(header),
        "tags": [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list) else [],
        "dataset": dataset.strip() if dataset else default_dataset(file),
        "threshold": _suite_threshold(header, execution, file, problems),
        "target": header.get("target", execution.get("target")),
        "target_line": key_line(header, "target") if "target" in header else key_line(execution, "target", 1),
        "input": header.get("input"),
        "input_files": None,
        "input_files_line": key_line(header, "input_files"),
    }
    if header.get("input_files") is not None:
        try:
            defaults["input_files"] = parse_input_files(header["input_files"], key_line(header, "input_files"))
        except EvalFileError as exc:
            problems.append(Problem(file, exc.line, exc.message, exc.expected))
    defaults.update(_execution_defaults(header, execution, roots, file, problems))
    raw_evaluators: Any = None
    evaluators_line = line_of(header)
    listed_under = ""
    for holder, key in ((header, "assertions"), (header, "assert"), (execution, "evaluators"), (header, "evaluators")):
        if holder.get(key) is not None:
            raw_evaluators, evaluators_line, listed_under = holder[key], key_line(holder, key, evaluators_line), key
            break
    name_required = generation == 2
    if raw_evaluators is None and header.get("evaluator") is not None:  # a single one (AgentV's sidecar example)
        raw_evaluators, evaluators_line = [header["evaluator"]], key_line(header, "evaluator", evaluators_line)
        name_required = False
    defaults["preprocessors"] = _suite_preprocessors(header, roots, file, problems, four_x or decided.generation == "4.x")
    try:
        defaults["evaluators"] = parse_evaluators(raw_evaluators, roots, file, problems, name_required=name_required,
                                                  line=evaluators_line, criteria_strings=four_x,
                                                  assertions_key=listed_under == "assertions",
                                                  file_generation="4.x" if four_x and not decided.pinned
                                                  else decided.generation)
        defaults["evaluators"] = with_suite_preprocessors(defaults["evaluators"], defaults["preprocessors"])
    except EvalFileError as exc:
        problems.append(Problem(file, exc.line, exc.message, exc.expected))
        defaults["evaluators"] = []
    return defaults


def _suite_preprocessors(header: Any, roots: SearchRoots, file: Path, problems: list[Problem],
                         four_x: bool) -> list[PreprocessorConfig]:
    """The suite's `preprocessors:` (AgentV 4.42): every llm-grader of the file and the default grader of a test
    without assertions read the answer's file blocks through them. A bad entry fails the whole file there."""
    if header.get("preprocessors") is None:
        return []
    at = key_line(header, "preprocessors")
    try:
        parsed = parse_preprocessors(header["preprocessors"], at, roots, file, "the suite")
    except EvalFileError as exc:
        problems.append(Problem(file, exc.line, exc.message, exc.expected))
        return []
    if not four_x:
        problems.append(no_effect(file, at, "preprocessors", "AgentV 2.19 reads no preprocessors (a file read as "
                                  "AgentV 2.x)", "the file read as AgentV 4.x, or no preprocessors"))
        return []
    return merged_preprocessors(parsed, None) or []  # of one type, the last written (AgentV's merge)


def _suite_threshold(header: Any, execution: Any, file: Path, problems: list[Problem]) -> float | None:
    """The suite's pass mark, checked once where it is written (it was checked in each case and reported at
    every case's line instead); a broken one is a problem and left out."""
    holder = header if "threshold" in header else execution
    try:
        return parse_threshold(holder.get("threshold"), key_line(holder, "threshold", line_of(header)))
    except EvalFileError as exc:
        problems.append(Problem(file, exc.line, exc.message, exc.expected))
        return None


def _metadata_problems(header: dict[str, Any], file: Path) -> list[Problem]:
    """The eval spec v2 metadata block in the shapes AgentV's metadata schema takes: nothing reads it, but a
    shape AgentV refuses is refused here too, at its line."""
    found: list[Problem] = []
    for key in ("version", "author", "license"):
        value = header.get(key)
        if key in header and not isinstance(value, str):
            found.append(Problem(file, key_line(header, key), f"'{key}' must be text, got {value!r}",
                                 f'{key}: "1.0"' if key == "version" else f"{key}: some text"))
    tags = header.get("tags")
    if "tags" in header and not (isinstance(tags, list) and all(isinstance(tag, str) for tag in tags)):
        found.append(Problem(file, key_line(header, "tags"), f"'tags' must be a list of text, got {tags!r}",
                             "tags: [demo, smoke]"))
    requires = header.get("requires")
    if "requires" in header and not (isinstance(requires, dict) and set(requires) <= {"agentv"}
                                     and isinstance(requires.get("agentv", ""), str)):
        shown = dict(requires) if isinstance(requires, dict) else requires
        found.append(Problem(file, key_line(header, "requires"), "'requires' holds only 'agentv' (the AgentV versions "
                             f"the suite needs), got {shown!r}", 'requires: {agentv: ">=2.0"}'))
    return found


def _forms4_problems(header: dict[str, Any], file: Path) -> list[Problem]:
    """AgentV 4.x's descriptive suite keys in the shapes 4.42 reads: `category` text, `governance` a mapping
    (4.42 leaves any other value out of the cases' metadata, so it is said, not dropped unsaid)."""
    found: list[Problem] = []
    if "category" in header and not isinstance(header.get("category"), str):
        found.append(Problem(file, key_line(header, "category"), f"'category' must be text, got "
                             f"{yaml_kind(header.get('category'))}", "category: some-area"))
    if "governance" in header and not isinstance(header.get("governance"), dict):
        found.append(Problem(file, key_line(header, "governance"), "'governance' is not a mapping: AgentV 4.42 leaves "
                             "it out of the cases' metadata", "governance: {owner: ..., risk_tier: ...}",
                             severity="warning"))
    return found


def _execution_defaults(header: Any, execution: Any, roots: SearchRoots, file: Path,
                        problems: list[Problem]) -> dict[str, Any]:
    """The suite's trials, matrix, budget/stop/cache settings and workspace hooks; each broken one
    is a located problem (and left at its default, since the run will not start anyway)."""
    out: dict[str, Any] = {}
    readers: list[tuple[str, Callable[[], Any]]] = [
        ("trials", lambda: parse_trials(execution.get("trials"), key_line(execution, "trials"))),
        ("targets", lambda: parse_targets(execution.get("targets"), key_line(execution, "targets"))),
        ("suite_execution", lambda: suite_execution(execution)),
        ("workspace", lambda: parse_workspace(header.get("workspace"), key_line(header, "workspace"), roots, file,
                                              problems, suite=True)),
    ]
    for name, read in readers:
        try:
            out[name] = read()
        except EvalFileError as exc:
            problems.append(Problem(file, exc.line, exc.message, exc.expected))
    if out.get("targets"):
        out["targets_line"] = key_line(execution, "targets")
    out["cost_limits"] = [(budget_name(execution), file, key_line(execution, budget_name(execution)))
                          ] if out.get("suite_execution") and out["suite_execution"].total_budget_usd is not None else []
    if out.get("trials") is not None and out["trials"].cost_limit_usd is not None:
        out["trials_cost_limit"] = ("cost_limit_usd", file, key_line(execution.get("trials"), "cost_limit_usd"))
    return out
