"""The gate's quarantine: known-failing cases listed outside the eval files, in `.agentv/gate.yaml`.

The eval files stay AgentV's (AgentV refuses keys it does not know, and a known gap is a fact
about this gate, not about the case), so the list lives in a file of the gate's own, beside
targets.yaml and found the same way (the nearest `.agentv/` from the working folder upwards):

```yaml
quarantine:
  - id: refund-policy                  # the case's id
    file: evals/support.eval.yaml      # optional: only in this eval file (repo-relative)
    reason: the judge misreads refunds (#412)
    until: 2026-12-31                  # optional: from the day after, the case counts again
```

A quarantined case still runs and is reported as quarantined; its failure never fails the gate, its
error does (`report.rows.outcome`: a broken judge says nothing of the case).
An entry past its `until` date quarantines nothing (the run says so), and one naming no case of
the run is said too, so the list cannot rot unseen. Every problem is located at its line.
"""

from __future__ import annotations

import datetime
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..base.files import EscapingSymlinkError, nearest_agentv_file
from ..base.key_checks import did_you_mean
from ..base.problems import Problem
from ..errors import ConfigError, EvalFileError
from .file_generation import pin_problems
from .yaml_lines import item_line, key_line, load_yaml_text, read_text

GATE_CONFIG_NAMES = ("gate.yaml", "gate.yml")
ENTRY_KEYS = {"id": "the case's id (a glob such as 'refund-*' allowed)",
              "file": "the eval file the case is in, relative to the repository root (optional)",
              "reason": "why the case is known to fail (required)",
              "until": "the last day the quarantine holds, YYYY-MM-DD (optional)"}
TOP_KEYS = ("quarantine", "agentv", "agent_paths", "judges")
"""agentv: the files' AgentV generation (file_generation.py); agent_paths: globs of the agent's files, for
`run --affected-since` (commands/_affected.py); judges: the judges' floor (judge_floor.py)."""
GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class QuarantineEntry:
    """One known-failing case: which, why, and until when."""

    id: str
    reason: str
    file: str | None = None
    until: datetime.date | None = None
    source: Path = Path()
    line: int = 1

    def matches(self, suite: str, eval_id: str) -> bool:
        if not fnmatch.fnmatchcase(eval_id, self.id):
            return False
        return self.file is None or _normal(suite) == _normal(self.file)

    def expired(self, today: datetime.date) -> bool:
        return self.until is not None and today > self.until


@dataclass
class Quarantine:
    """The quarantine list of one run (empty when there is no gate config)."""

    entries: list[QuarantineEntry] = field(default_factory=list)
    path: Path | None = None
    problems: list[Problem] = field(default_factory=list)
    today: datetime.date = field(default_factory=datetime.date.today)
    agent_paths: list[str] | None = None
    """`agent_paths:` (repo-relative globs): the files whose change makes `--affected-since` run every case."""

    def entry_for(self, suite: str, eval_id: str) -> QuarantineEntry | None:
        """The first entry naming the case, expired or not."""
        return next((e for e in self.entries if e.matches(suite, eval_id)), None)

    def reason_for(self, suite: str, eval_id: str) -> str | None:
        """The reason the case is quarantined now, with its `until` when it has one (every report
        shows it); None when it is not (or its entry expired)."""
        entry = self.entry_for(suite, eval_id)
        if entry is None or entry.expired(self.today):
            return None
        return entry.reason + (f" (until {entry.until})" if entry.until is not None else "")

    def notices(self, cases: list[tuple[str, str]]) -> list[Problem]:
        """Warnings for entries that expired (their cases count again), or that name an eval file of
        the run but none of its cases (renamed or deleted). An entry for a file the run did not load
        is no concern of this run (pre-commit passes only the files a commit touches).

        An error for a pattern that quarantines the whole run: one that matches any id in any file (`'*'`), or a
        glob matching every case of a run of two or more (a list that mutes the whole gate is no list
        of known failures). An exact id naming the one case of a one-case run (pre-commit on one
        file) stays a quarantine."""
        found: list[Problem] = []
        suites = {_normal(suite) for suite in {suite for suite, _ in cases}}  # a suite's cases share its name
        for entry in self.entries:
            blanket = _blanket(entry, cases)
            if blanket is not None:
                found.append(Problem(entry.source, entry.line, blanket,
                                     "the ids of the cases known to fail (a glob such as 'refund-*' that leaves "
                                     "others counting), each with its reason"))
            elif entry.expired(self.today):
                found.append(Problem(entry.source, entry.line, f"quarantine of '{entry.id}' expired on "
                                     f"{entry.until}: the case counts again ({entry.reason})",
                                     "a later 'until', or the entry removed once the case passes",
                                     severity="warning"))
            elif entry.file is not None and _normal(entry.file) in suites and \
                    not any(entry.matches(suite, eval_id) for suite, eval_id in cases):
                found.append(Problem(entry.source, entry.line, f"quarantine entry '{entry.id}' names no case of "
                                     f"{entry.file}", "the id of a case in that file", severity="warning"))
        return found


def _blanket(entry: QuarantineEntry, cases: list[tuple[str, str]]) -> str | None:
    """Why the entry would quarantine the whole run, or None when it leaves cases counting."""
    if entry.file is None and entry.id.strip("*?") == "" and "*" in entry.id:
        return f"quarantine id {entry.id!r} matches every case of every file, so nothing could fail the gate"
    if GLOB_CHARS.isdisjoint(entry.id) or len(cases) < 2:
        return None
    if all(entry.matches(suite, eval_id) for suite, eval_id in cases):
        return (f"quarantine id {entry.id!r} matches every case of this run ({len(cases)}), so nothing could "
                f"fail the gate")
    return None


def _normal(path: str) -> str:
    text = path.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return str(PurePosixPath(text))


def find_gate_config(eval_files: Iterable[Path] = ()) -> Path | None:
    """The nearest `.agentv/gate.yaml` from the working folder up to its repository root, else from an
    eval file's folder up to its root (`project_root`), never above it.
    One that is a symlink resolving outside the repository raises `ConfigError`, located."""
    starts = [Path.cwd(), *sorted({file.resolve().parent for file in eval_files})]
    for start in starts:
        try:
            found = nearest_agentv_file(start, GATE_CONFIG_NAMES)
        except EscapingSymlinkError as exc:
            raise ConfigError(f"{exc.filename}:1: {exc.strerror}", problems=[
                Problem(Path(exc.filename), 1, str(exc.strerror), "a gate.yaml inside the repository")]) from None
        if found is not None:
            return found
    return None


def load_quarantine(path: Path | None) -> Quarantine:
    """The quarantine list in `path` (None: no gate config, nothing quarantined), every problem located."""
    if path is None:
        return Quarantine()
    quarantine = Quarantine(path=path)
    try:
        data = load_yaml_text(read_text(path))
    except EvalFileError as exc:
        quarantine.problems.append(Problem(path, exc.line, exc.message, exc.expected))
        return quarantine
    if data is None:
        return quarantine
    if not isinstance(data, dict):
        quarantine.problems.append(Problem(path, 1, "the gate config must be a mapping", "quarantine: [...]"))
        return quarantine
    for key in data:
        if key not in TOP_KEYS:
            quarantine.problems.append(Problem(path, key_line(data, str(key)), f"unknown key '{key}'",
                                               ", ".join(TOP_KEYS), unknown_key=True))
    if "agentv" in data:
        quarantine.problems.extend(pin_problems(data["agentv"], path, key_line(data, "agentv")))
    if "agent_paths" in data:
        paths = data["agent_paths"]
        if isinstance(paths, list) and paths and all(isinstance(p, str) and p.strip() for p in paths):
            quarantine.agent_paths = [p.strip() for p in paths]
        else:
            quarantine.problems.append(Problem(path, key_line(data, "agent_paths"),
                                               "agent_paths must be a non-empty list of globs",
                                               "agent_paths: [src/**, prompts/**]"))
    listed = data.get("quarantine")
    if listed is None:
        return quarantine
    if not isinstance(listed, list):
        quarantine.problems.append(Problem(path, key_line(data, "quarantine"), "quarantine must be a list",
                                           "a list of entries with id and reason"))
        return quarantine
    for index, item in enumerate(listed):
        line = item_line(listed, index)
        try:
            quarantine.entries.append(_entry(item, path, line))
        except EvalFileError as exc:
            quarantine.problems.append(Problem(path, exc.line, exc.message, exc.expected))
    return quarantine


def _entry(item: Any, path: Path, line: int) -> QuarantineEntry:
    if not isinstance(item, dict):
        raise EvalFileError(line, "a quarantine entry must be a mapping", "id: CASE_ID, reason: WHY")
    for key in item:
        if key not in ENTRY_KEYS:
            raise EvalFileError(key_line(item, str(key), line), f"unknown key '{key}' in a quarantine entry"
                                f"{did_you_mean(str(key), list(ENTRY_KEYS))}", ", ".join(ENTRY_KEYS))
    for key in ("id", "reason"):
        value = item.get(key)
        if not isinstance(value, str) or not value.strip():
            raise EvalFileError(key_line(item, key, line), f"a quarantine entry needs '{key}'", ENTRY_KEYS[key])
    file = item.get("file")
    if file is not None and (not isinstance(file, str) or not file.strip()):
        raise EvalFileError(key_line(item, "file", line), "file must be a path", ENTRY_KEYS["file"])
    until = item.get("until")
    day: datetime.date | None = None
    if until is not None:
        try:
            day = datetime.date.fromisoformat(str(until))
        except ValueError:
            raise EvalFileError(key_line(item, "until", line), f"until: {until!r} is not a date",
                                "YYYY-MM-DD") from None
    return QuarantineEntry(item["id"].strip(), item["reason"].strip(), file.strip() if file else None, day,
                           path, line)
