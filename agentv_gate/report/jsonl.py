"""Results JSONL: one row per case, written and flushed the moment the case finishes.

Streaming (rather than writing everything at the end) is what makes an interrupted run keep its
finished cases: after Ctrl-C, SIGTERM or a crash, every case that completed is already on disk
as a whole line. Reading back (`merge`) therefore has to accept a file whose last line was cut off
mid-write, and says so instead of failing.
"""

from __future__ import annotations

import errno
import itertools
import json
import math
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any, NamedTuple

from pydantic import ValidationError

from ..base.files import make_own_folder, refuse_escaping_symlink
from ..base.problems import Problem
from ..errors import ReportWriteError, ResultsReadError
from ..models import CaseResult

MAX_ROW_BYTES = 256 * 1024 * 1024
"""The longest results row read back. A row holds an answer (8 MiB by default, `max_response_bytes`)
and the judges' requests quoting it; a line past this is no row we wrote (`/dev/zero`, a binary
file), and reading it whole would exhaust memory before any check could say so."""


def describe_os_error(exc: OSError) -> str:
    """`No space left on device` rather than `[Errno 28] No space left on device: '/x'`."""
    return exc.strerror or str(exc) or type(exc).__name__


def ensure_parent(path: Path) -> None:
    """Create `path`'s folder; a file in the way is reported as "Not a directory", not "File exists"."""
    try:
        make_own_folder(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent)) from exc


def _finite(value: Any) -> Any:
    """`value` with every NaN or infinite float replaced by None (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


class JsonlWriter:
    """Appends `CaseResult.to_json_row()` lines to `path`; the file is created (truncated) on construction.

    Safe to call `write` from several worker threads: each row is written and flushed under a lock,
    so lines never interleave. Non-ASCII text is kept readable; a lone surrogate (which UTF-8
    cannot encode) is written as its JSON `\\uXXXX` escape so the row stays valid JSON.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self.rows_written = 0
        try:
            refuse_escaping_symlink(self.path)
            ensure_parent(self.path)
            self._file = open(self.path, "w", encoding="utf-8", errors="backslashreplace", newline="\n")
        except OSError as exc:
            raise ReportWriteError(f"cannot write results to {self.path}: {describe_os_error(exc)}") from exc

    def write(self, result: CaseResult) -> None:
        row = result.to_json_row()
        try:
            line = json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n"
        except ValueError:  # NaN or infinity somewhere: bare `NaN` is not JSON, so it is written as null
            line = json.dumps(_finite(row), ensure_ascii=False) + "\n"
        with self._lock:
            if self._file is None:
                raise ReportWriteError(f"cannot write results to {self.path}: the writer is already closed")
            try:
                self._file.write(line)
                self._file.flush()
            except OSError as exc:
                reason = describe_os_error(exc)
                raise ReportWriteError(f"cannot write results to {self.path}: {reason}") from exc
            self.rows_written += 1

    def close(self) -> None:
        """Idempotent, so an interrupted run can close in a `finally` and again on the normal path."""
        with self._lock:
            file, self._file = self._file, None
        if file is None:
            return
        try:
            file.close()
        except OSError as exc:
            raise ReportWriteError(f"cannot write results to {self.path}: {describe_os_error(exc)}") from exc

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class ReadResults(NamedTuple):
    """Rows read back, plus what was skipped and why (a truncated last line), for the caller to report."""

    results: list[CaseResult]
    problems: list[str]


def trials_problem(result: CaseResult) -> str | None:
    """What is wrong with a row's `trials[]`, or None: each entry is checked as the row is (a finite
    score in 0..1, a verdict that agrees with it at the row's threshold) and attempts are numbered
    1..N in order. A paired test reads these entries, so a trial no run could have written (score
    5, `fail` at score 1, every attempt numbered 1) would otherwise count as evidence."""
    for number, trial in enumerate(result.trials or [], start=1):
        attempt = trial.get("attempt")
        if attempt is not None and attempt != number:
            return f"trial {number} is numbered attempt {attempt}; attempts are numbered 1..N in order"
        score = trial.get("score")
        if score is None:
            continue
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            return f"trial {number}: score {score!r} is not a number"
        if not math.isfinite(score):
            return f"trial {number}: score {score} is not a finite number"
        if not 0 <= score <= 1:
            return f"trial {number}: score {score:g} is not in 0..1"
        verdict = trial.get("verdict")
        if verdict in ("pass", "fail") and (verdict == "pass") != (score >= result.threshold):
            return (f"trial {number}: verdict {verdict} with score {score:g} at threshold {result.threshold:g} "
                    "(a trial passes exactly when its score meets the threshold)")
    return None


def read_results(paths: Iterable[Path | str], several_runs: bool = False) -> ReadResults:
    """Every row of every file, in order. Unpacks as `results, problems = read_results(paths)`.
    `several_runs`: the files hold runs appended one after the other (`--history`), a case once per run.

    A last line with no newline that is not valid JSON is what an interrupted writer leaves behind,
    so it is skipped and reported in `problems`. Any other bad line means the file is damaged, and
    silently dropping a (possibly failing) case would let a gate pass wrongly, so that raises
    `ResultsReadError` with the file and line. So do a score or threshold that is not a finite
    number, a score outside 0..1, a case that appears twice (counting it twice would skew the
    verdict), and a line longer than `MAX_ROW_BYTES`.

    No row's `verdict` is trusted: a row with an error is an error, else it passes exactly when its
    score meets its threshold, as the run that wrote it decided. Files are read line by line.
    """
    results: list[CaseResult] = []
    problems: list[str] = []
    seen: dict[tuple[str, str, str, str | None], str] = {}
    for raw_path in paths:
        path = Path(raw_path)
        for line_no, result in _iter_file(path, problems):
            where = f"{path}:{line_no}"
            for name in ("score", "threshold"):
                value = getattr(result, name)
                if not math.isfinite(value):
                    raise _bad_row(path, line_no, f"{name} {value} is not a finite number")
            if not 0 <= result.score <= 1:  # no evaluator scores outside 0..1, so no run wrote it
                raise _bad_row(path, line_no, f"score {result.score} is not in 0..1")
            problem = trials_problem(result)
            if problem:
                raise _bad_row(path, line_no, problem)
            key = (result.suite, result.eval_id, result.target, result.run_id if several_runs else None)
            if key in seen:
                once = "appear once in each run" if several_runs else "come from one shard only"
                raise _bad_row(path, line_no, f"duplicate result for case '{result.eval_id}' of {result.suite} "
                                     f"(first at {seen[key]}); each case must {once}")
            seen[key] = where
            result.verdict = "error" if result.error else ("pass" if result.score >= result.threshold else "fail")
            results.append(result)
    return ReadResults(results, problems)


def unfinished_runs(results: list[CaseResult]) -> str | None:
    """The runs whose rows are fewer than they set out to write (killed outright, with no chance to
    write rows for the cases they never finished), or None. Rows of older versions say nothing."""
    written: dict[str, int] = {}
    planned: dict[str, int] = {}
    for r in results:
        if r.run_id is not None and r.run_rows is not None:
            written[r.run_id] = written.get(r.run_id, 0) + 1
            planned[r.run_id] = r.run_rows
    short = [f"run {run_id} wrote {written[run_id]} of its {planned[run_id]} row(s)"
             for run_id in sorted(written) if written[run_id] < planned[run_id]]
    if not short:
        return None
    return "; ".join(short) + " (a job killed before the end? `grep -l RUN_ID` finds its file)"


def missing_shards(results: list[CaseResult]) -> str | None:
    """What is missing from a set of shard results, or None when it is whole.

    `merge` refuses such a set, and `compare` and `--baseline` a side that is one shard of a run
    the other side has more of. Each shard row knows how many rows the unsharded run has (a row
    per case and target); fewer distinct rows than that means a shard job died or never uploaded
    (or stopped part way, maybe between a matrix case's targets).
    """
    expected = max((r.shard_total for r in results if r.shard_total), default=0)
    present = {(r.suite, r.eval_id, r.target) for r in results}
    labels = {r.shard for r in results if r.shard}
    count = max((int(label.split("/")[1]) for label in labels if _well_formed(label)), default=0)
    # Recomputed from the rows, so a `shard_total` lowered by hand cannot hide a shard that sent
    # nothing: `--shard` deals cases out round-robin, so shard K holds a case whenever the run has
    # at least K cases, and a shard holding M cases shows the run has (M - 1) * N + K at least.
    # (A shard beyond the case count has none and writes no row; it is not missing.)
    cases_of: dict[str, set[tuple[str, str]]] = {}
    for r in results:
        if r.shard and not r.carried:  # `--affected-since`'s carried rows are not dealt out: the first shard has them
            cases_of.setdefault(r.shard, set()).add((r.suite, r.eval_id))
    # the cases dealt out, the carried ones not: two affected cases over three shards leave the third none
    cases = len({(r.suite, r.eval_id) for r in results if not r.carried})
    least = max([cases] + [(len(dealt) - 1) * count + int(label.split("/")[0]) for label, dealt in cases_of.items()
                           if _well_formed(label) and label.endswith(f"/{count}")])
    absent = [f"{k}/{count}" for k in range(1, count + 1) if f"{k}/{count}" not in labels]
    if cases < least and not absent:  # a shard short of what the others' rows show it held
        return (f"{least - cases} of at least {least} case(s) have no result (a shard holds fewer cases than the "
                "round-robin of the other shards' rows gives it; its totals were lowered?)")
    if len(present) >= expected and not any(int(label.split("/")[0]) <= least for label in absent):
        return None
    where = f" (no results at all from shard(s) {', '.join(absent)})" if absent else ""
    if len(present) >= expected:
        return f"no results at all from shard(s) {', '.join(absent)}, though the rows show it holds cases"
    return f"{expected - len(present)} of {expected} case(s) have no result{where}"


def _well_formed(label: str) -> bool:
    """`K/N` with 1 <= K <= N: a label `--shard` writes."""
    parts = label.split("/")
    return len(parts) == 2 and all(p.isdigit() for p in parts) and 1 <= int(parts[0]) <= int(parts[1])


def _bad_row(path: Path, line_no: int, message: str) -> ResultsReadError:
    """`path:line: message`, with the place kept as a problem so GitHub Actions can annotate the line."""
    return ResultsReadError(f"{path}:{line_no}: {message}", problems=[Problem(path, line_no, message)])


def _lines(handle: IO[bytes], path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, ended by a newline) of each line, none read past `MAX_ROW_BYTES`."""
    for line_no in itertools.count(1):
        raw = handle.readline(MAX_ROW_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_ROW_BYTES:
            raise _bad_row(path, line_no, f"not a results file (line over {MAX_ROW_BYTES} bytes)")
        yield line_no, raw.decode("utf-8", errors="replace"), raw.endswith(b"\n")


def _iter_file(path: Path, problems: list[str]) -> Iterator[tuple[int, CaseResult]]:
    """(line number, result) for each row of one file, read a line at a time.

    Only a last line with no newline is what a writer cut off mid-row leaves (every row is written
    with its newline in one write), so it is skipped and said; an unreadable line that has its
    newline is damage, located.
    """
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ResultsReadError(f"cannot read results from {path}: {describe_os_error(exc)}") from exc
    with handle:
        try:
            for line_no, line, ended in _lines(handle, path):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except RecursionError:
                    raise _bad_row(path, line_no, "not a JSON results row (nested too deeply)") from None
                except ValueError as exc:  # JSONDecodeError, or an integer past 4300 digits
                    reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc).split(";")[0]
                    if ended:
                        raise _bad_row(path, line_no, f"not a JSON results row ({reason})") from None
                    problems.append(f"{path}:{line_no}: skipped a truncated last line "
                                    f"({len(line)} characters, {reason.lower()}); the rest was read")
                    return
                yield line_no, _case_result(path, line_no, row)
        except OSError as exc:
            raise ResultsReadError(f"cannot read results from {path}: {describe_os_error(exc)}") from exc


def _case_result(path: Path, line_no: int, row: Any) -> CaseResult:
    if not isinstance(row, dict):
        raise _bad_row(path, line_no, f"expected a JSON object per line, got {type(row).__name__}")
    try:
        return CaseResult.model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "row"
        reason = first.get("msg")
        raise _bad_row(path, line_no, f"not a case result: {where}: {reason}") from exc


__all__ = ["JsonlWriter", "ReadResults", "ReportWriteError", "ResultsReadError", "read_results"]
