"""A run's view of its suites: every case checked once up front, then built again as the run reaches it.

Checking everything first is what lets a run refuse to start on a broken eval file, check every
target name, count and shard the cases. Keeping every built case from that pass is what made
memory grow with the suite, so the plan keeps a small `CaseRef` per case instead.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from pydantic import BaseModel

from ..base.generations import Generation, pass_mark
from ..base.problems import FoundProblems, Problem, allowing_unknown_keys, strict_problems
from ..models import CompositeConfig, EvalCase, EvaluatorConfig, LlmJudgeConfig, aggregator_kind
from .discover import discover_eval_files
from .documents import Documents
from .includes import suites_only
from .project_config import nearest_config, project_config_problems
from .refs import find_repo_root
from .suite import iter_eval_file

KEEP_CASES = 500


class CaseRef(NamedTuple):
    """What a run keeps of each case between checking the suites and running them: enough to
    shard, check target names, count, and find the case again (file, then position in its list).
    A named tuple: a long suite makes one per case, and a frozen dataclass cost four times as much
    to make."""

    file_index: int
    position: int
    id: str
    suite: str
    target: str | None
    source_file: Path
    source_line: int
    judges: tuple[JudgeUse, ...] = ()
    target_line: int | None = None
    """Each judge model the case's evaluators call, so the run can check them all before the first call."""
    targets: tuple[str, ...] = ()
    """`execution.targets`: the case runs once on each (a matrix)."""
    costs: tuple[tuple[str, Path, int], ...] = ()
    """The cost limits the case runs under (`EvalCase.cost_limits`), for the preflight to check."""
    digest: str = ""
    """`case_digest` of the case as the eval files define it now: a rerun carries over an old row
    only when it judged this same case."""
    threshold: float | None = None
    """The case's own `threshold` (its suite's, or its own), which wins over `--threshold`."""
    tags: tuple[str, ...] = ()
    """Its suite's `tags`, for `--tag` / `--exclude-tag` (AgentV 4.x selects whole eval files by them)."""
    depends_on: tuple[str, ...] = ()
    """`depends_on` (AgentV 4.x): the tests of its suite that run before it, so a selection keeps them."""
    generation: Generation = "2.x"
    """The AgentV its file was written for, whose default pass mark a row of the case not run still holds."""
    content: str = ""
    """The case's content digest (`case_digests`: its `digest` without its id and files), which a row carries
    so a baseline comparison can pair a renamed or moved case with its base row."""

    def pass_mark(self, flag: float | None) -> float:
        """The threshold the case is judged at under `--threshold flag`, as `orchestrator.case_threshold`."""
        return pass_mark(self.threshold, flag, self.generation)


WHERE_KEYS = frozenset({"source_file", "source_line", "suite_file", "target_line", "cost_limits"})
"""Where a case is written, not what it checks: moving it (a case added above it, the repository
checked out elsewhere) must not make a rerun distrust its old row."""


def case_digest(case: EvalCase, root: str | None = None) -> str:
    """A short hash of what the case runs and how it is judged: its input, expected answer,
    evaluators, threshold, trials and targets, and what its workspace starts from. A results row
    carries it, so `--rerun-failed` and `--retry-errors` tell an old pass of this case from one of an earlier version of it (its
    assertions since changed), which must run again rather than be carried over as a pass.
    The judge files its evaluators run (a code judge's script, a custom assertion's, a prompt
    template) count by their content, so editing a judge also runs its cases again. Paths the
    loader resolved under `root` (the repository's resolved path) count relative to it, so a checkout
    in another folder does not make every case run again."""
    return case_digests(case, root)[0]


NAME_KEYS = frozenset({"id", "suite", "case_file", "dataset"})
"""What names a case rather than what it checks: its test id and the files it is written in (a dataset's
name defaults to its file's). A case renamed, or moved to another eval file, keeps its content digest."""


def case_digests(case: EvalCase, root: str | None = None) -> tuple[str, str]:
    """(`case_digest`, the content digest): the same hash, then the same without the case's names
    (`NAME_KEYS`), which a baseline comparison pairs a renamed or moved case by. Both from one dump."""
    # Python mode and `default=str`: whatever a YAML value holds (a date, a Path) hashes; keys of
    # mixed types (`{1: a, b: 2}`) cannot be sorted, and repr is then stable enough (a changed
    # digest only runs a case again).
    dumped = case.model_dump(exclude=set(WHERE_KEYS))
    if _holds_long_text(case):
        dumped = _long_texts_hashed(dumped)
    judges = [_file_digest(path) for path in _judge_files(case.evaluators)]
    workspace = _workspace_files(case)
    content = {key: value for key, value in dumped.items() if key not in NAME_KEYS}
    return _hashed([dumped, judges, *([workspace] if workspace else [])], root), \
        _hashed([content, judges, workspace], root)


def _hashed(parts: list[Any], root: str | None) -> str:
    try:
        text = json.dumps(parts, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(parts)
    if root is not None:
        text = text.replace(root, "<root>")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


LONG_TEXT = 64 * 1024
"""A string longer than this enters a digest as the hash of its text, hashed a slice at a time."""


def _holds_long_text(case: EvalCase) -> bool:
    """Whether a text of the case (its question, expected outcome, reference answer or a message's
    content, where long texts are written) is longer than `LONG_TEXT`: only such a case is walked
    by `_long_texts_hashed`, which would cost every ordinary case more than its whole digest."""
    texts = [case.question, case.expected_outcome, case.reference_answer]
    texts += [m.content for m in (*case.input_messages, *case.expected_messages)]
    return any(len(text) > LONG_TEXT if isinstance(text, str) else _long_texts_hashed(text) != text
               for text in texts)


def _long_texts_hashed(value: Any) -> Any:
    """`value` with each string longer than `LONG_TEXT` replaced by `sha256:<hash of its UTF-8>`.

    A case whose input is one 50 MB string was escaped into a 50 MB JSON text, copied by the root
    replacement and encoded again: four copies of it alive at once (validate's peak memory nearly
    doubled) and seconds of escaping. Hashing it in 1 MB slices keeps one slice extra at a time;
    the digest still changes with any character of the text."""
    if isinstance(value, str):
        if len(value) <= LONG_TEXT:
            return value
        digest = hashlib.sha256()
        for start in range(0, len(value), 1 << 20):
            digest.update(value[start:start + (1 << 20)].encode("utf-8", "surrogatepass"))
        return f"sha256:{digest.hexdigest()}"
    if isinstance(value, dict):
        return {key: _long_texts_hashed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_long_texts_hashed(item) for item in value]
    return value


def _judge_files(evaluators: Iterable[BaseModel]) -> list[str]:
    """Every file the loader resolved for `evaluators` to run or read (the `resolved_*` fields it
    fills and dumps leave out: scripts, prompt files), composites' members included."""
    found: list[str] = []
    for config in evaluators:
        for name, value in vars(config).items():
            if not name.startswith("resolved_") or value is None:
                continue
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, (str, Path)) and Path(item).is_absolute() and Path(item).is_file():
                    found.append(str(item))
        found.extend(_judge_files(_members(config)))
    return found


def _workspace_files(case: EvalCase) -> list[str]:
    """What the case's workspace starts from, by content: its hooks' script files and every file of its
    template (as the copy takes them, without `.git`; a linked folder by where it points). A pull request editing the
    template or a seed script changes what the case runs on, as editing its judge changes how it is judged."""
    workspace = case.workspace
    if workspace is None:
        return []
    found = [_file_digest(arg) for hook in workspace.hooks.values() for arg in hook.argv
             if Path(arg).is_absolute() and Path(arg).is_file()]
    if workspace.template is not None:
        found.append(_template_digest(workspace.template))
    return found


_TEMPLATE_DIGESTS: dict[str, str] = {}
"""A template's path -> the hash of its files, made once a plan (`_plan_files` empties it): the cases of a
suite share one, and a later plan in the same process sees the template as it is then."""


def _template_digest(template: Path) -> str:
    key = str(template)
    if key not in _TEMPLATE_DIGESTS:
        digest = hashlib.sha256()
        for folder, folders, files in os.walk(template):  # a linked folder by where it points: a loop ends
            folders[:] = sorted(name for name in folders if name != ".git")
            for name in sorted(files + [f for f in folders if os.path.islink(os.path.join(folder, f))]):
                path = os.path.join(folder, name)
                held = f"link {os.readlink(path)}" if os.path.isdir(path) else _file_digest(path)
                digest.update(f"{os.path.relpath(path, template)}\0{held}\0".encode("utf-8", "replace"))
        _TEMPLATE_DIGESTS[key] = digest.hexdigest()
    return _TEMPLATE_DIGESTS[key]


def _members(config: BaseModel) -> list[EvaluatorConfig]:
    """The evaluators a config holds (a composite's members); a config of any other kind holds none."""
    members: list[EvaluatorConfig] = MEMBERS.get(type(config), lambda _: [])(config)
    return members


MEMBERS: dict[type[BaseModel], Callable[[Any], list[EvaluatorConfig]]] = {CompositeConfig: lambda c: c.evaluators}
"""Config class -> the evaluators it holds, whose files and judges are its own too."""


_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}
"""(path, size, mtime) -> the hash of its bytes: a judge most cases share is read once a run."""


def _file_digest(path: str) -> str:
    """The hash of a judge file's bytes; a file that cannot be read hashes as such (its case then
    runs again, where the judge's own error is reported)."""
    try:
        stat = os.stat(path)
        key = (path, stat.st_size, stat.st_mtime_ns)
        if key not in _FILE_DIGESTS:
            _FILE_DIGESTS[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        return _FILE_DIGESTS[key]
    except OSError as exc:
        return f"unreadable: {exc.errno}"


JudgeUse = tuple[str | None, Path, int]
"""(the judge target an evaluator names, or None for the case target's judge; file; line)."""


def judge_uses(evaluators: Iterable[EvaluatorConfig]) -> tuple[JudgeUse, ...]:
    """Where the evaluators of a case need a judge model: llm_judges, composites' members and llm aggregators."""
    uses: list[JudgeUse] = []
    for config in evaluators:
        members = MEMBERS.get(type(config))
        if members is not None:
            uses.extend(judge_uses(members(config)))
        judges = JUDGES.get(type(config))
        if judges is not None:
            where = (config.source_file or Path(), config.source_line or 1)
            uses.extend((target, *where) for target in judges(config))
    return tuple(dict.fromkeys(uses)) if uses else ()


JUDGES: dict[type[BaseModel], Callable[[Any], list[str | None]]] = {
    LlmJudgeConfig: lambda config: [config.target or None],
    CompositeConfig: lambda config: [None] if aggregator_kind(config.aggregator) == "llm_judge" else [],
}
"""Config class -> the judge targets its own evaluation calls (None: the case target's judge)."""


@dataclass
class SuitePlan(FoundProblems):
    """Every case found under some paths, as `CaseRef`s, with every problem found on the way.

    Only the first `KEEP_CASES` cases are kept built; `read_cases` builds the others again, one
    at a time, as the run reaches them, from the files as `documents` read them once. A suite of
    any size so costs the memory of at most `KEEP_CASES` cases (about 6 KB each) plus a ref and its
    packed text per case (about 0.2 KB). Building again costs about 0.15 ms a case, small beside
    any target or judge.
    """

    files: list[Path]
    refs: list[CaseRef]
    problems: list[Problem]
    repo_root: Path | None = None
    allow_outside_root: bool = False
    kept: dict[tuple[int, int], EvalCase] = field(default_factory=dict)
    """(file index, position) -> the case as first built, for the first `KEEP_CASES` cases."""
    vanished: list[CaseRef] = field(default_factory=list)
    """Refs `read_cases` could not build again (a file a case reads, such as a judge's prompt, gone
    during the run); filled as it goes."""
    generations: dict[int, str] = field(default_factory=dict)
    """File index -> which AgentV its file was read as, and why (`AgentV 4.x (assertions: at line 3)`)."""
    documents: Documents = field(default_factory=Documents)
    """The eval files as read when the plan was made: cases are built again from these, never from
    the files, which may have changed since."""

    def read_cases(self, refs: Iterable[CaseRef]) -> Iterator[EvalCase]:
        """The cases behind `refs`, in file order; any that cannot be built again as it was checked goes to
        `vanished`. The eval files are as the plan read them, but building a case reads its judges' files
        again: one changed or deleted since makes a problem the plan did not have, and the case, built
        without that evaluator, would have run on the others (or on the default judge) instead."""
        checked = {(problem.file, problem.line, problem.message) for problem in self.problems}
        wanted: dict[int, dict[int, CaseRef]] = {}
        for ref in refs:
            wanted.setdefault(ref.file_index, {})[ref.position] = ref
        for file_index in sorted(wanted):
            left = wanted[file_index]
            kept = {position: self.kept.pop((file_index, position)) for position in left if (file_index, position) in self.kept}
            if len(kept) == len(left):
                yield from (kept[position] for position in sorted(kept))
                continue
            kept.clear()  # the file is read again anyway: holding its kept cases for the whole run would only cost memory
            found_now: list[Problem] = []  # since the case before: this case's own
            for position, case in iter_eval_file(self.files[file_index], found_now, self.repo_root,
                                                 self.allow_outside_root, self.documents):
                new = [p for p in found_now if (p.file, p.line, p.message) not in checked]
                found_now.clear()
                found = left.pop(position, None)
                if found is not None and found.id == case.id and not new:
                    yield case
                elif found is not None:
                    self.vanished.append(found)
                if not left:
                    break
            self.vanished.extend(left.values())


def plan_paths(paths: list[Path], repo_root: Path | None = None, allow_outside_root: bool = False,
               allow_unknown_keys: bool = False, digests: bool = True, strict: bool = False) -> SuitePlan:
    """Read every eval file under `paths` once, keeping problems and a `CaseRef` per case.

    `allow_unknown_keys` makes unknown keys warnings (never a key AgentV has and we do not run);
    `strict` makes a setting that has no effect (a warning otherwise) an error.
    A case file a suite loads runs with that suite only (`includes.suites_only`). `digests=False`
    leaves each ref's `digest` empty, for a caller that runs nothing (`validate`): dumping and
    hashing every case was a quarter of validating a long suite."""
    files, problems = discover_eval_files(paths)
    named = {path for path in paths if path.is_file()}
    documents = Documents()
    files = suites_only(files, named | {path.with_suffix(".jsonl") for path in named}, repo_root, allow_outside_root,
                        documents)
    plan = SuitePlan(files=[], refs=[], problems=problems, repo_root=repo_root, allow_outside_root=allow_outside_root,
                     documents=documents)
    roots: list[Path] = []  # each file's repository, for its cases' digests and its project config
    with _collector_paused():
        _plan_files(plan, files, roots, digests)
    configs = (nearest_config(file, root) for file, root in zip(plan.files, roots, strict=True))
    plan.problems.extend(project_config_problems(config for config in configs if config is not None))
    plan.problems = strict_problems(allowing_unknown_keys(plan.problems, allow_unknown_keys), strict)
    return plan


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cycle collection while the suites are read: planning keeps a ref a case for the whole run and
    makes next to no cycles, and the collector's passes over the growing heap were a twelfth of planning
    400,000 cases. The collector runs again as it was, afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _plan_files(plan: SuitePlan, files: list[Path], roots: list[Path], digests: bool) -> None:
    """Each file's cases into the plan's refs (and the first `KEEP_CASES` kept built), its problems into its problems."""
    _TEMPLATE_DIGESTS.clear()
    interned: dict[tuple[JudgeUse, ...], tuple[JudgeUse, ...]] = {}  # most cases share their judges
    for file in files:
        file_index = len(plan.files)
        plan.files.append(file)
        roots.append(plan.repo_root or find_repo_root(file.parent))
        root = str(roots[-1].resolve())
        for position, case in iter_eval_file(file, plan.problems, plan.repo_root, plan.allow_outside_root,
                                             plan.documents):
            plan.generations.setdefault(file_index, f"AgentV {case.generation} ({case.generation_reason})")
            if len(plan.kept) < KEEP_CASES:
                plan.kept[(file_index, position)] = case
            # No evaluators: the run judges the case with the default llm_judge.
            uses = judge_uses(case.evaluators) if case.evaluators else ((None, file, case.source_line),)
            judges = interned.setdefault(uses, uses)
            digest, content = case_digests(case, root) if digests else ("", "")
            plan.refs.append(CaseRef(file_index, position, case.id, case.suite, case.target, file, case.source_line,
                                     judges, case.target_line, tuple(case.targets or ()),
                                     tuple(case.cost_limits), digest, case.threshold,
                                     tuple(case.suite_tags), tuple(case.depends_on), case.generation, content))


def matches_suite(suite: str, pattern: str) -> bool:
    """`--suite GLOB` against a suite: its repo-relative path (`evals/support/*`) or its file name (`smoke*`)."""
    path = suite.replace("\\", "/")
    return fnmatchcase(path, pattern) or fnmatchcase(PurePosixPath(path).name, pattern)


def filter_refs(refs: Sequence[CaseRef], test_ids: Sequence[str] = (), suites: Sequence[str] = (),
                tags: Sequence[str] = (), exclude_tags: Sequence[str] = ()) -> list[CaseRef]:
    """The cases `--test-id GLOB` and `--suite GLOB` select: an id matching any test-id glob (case-sensitive,
    as AgentV's) in a suite matching any suite glob; no glob of a kind keeps every case for it. `--tag`
    and `--exclude-tag` select suites as AgentV 4.42 does (`matchesTagFilters`): every `--tag` among the
    suite's tags (a suite without tags has none), no `--exclude-tag` among them."""
    return [ref for ref in refs
            if (not test_ids or any(fnmatchcase(ref.id, glob) for glob in test_ids))
            and (not suites or any(matches_suite(ref.suite, glob) for glob in suites))
            and all(tag in ref.tags for tag in tags) and not any(tag in ref.tags for tag in exclude_tags)]
