"""JUnit XML in AgentV's layout, built with `junit-xml`, valid against the Jenkins JUnit schema.

Layout (AgentV 2.18 `--output-format junit`, /work/shared/spec/agentv-2.18-junit-sample.xml):
`<testsuites tests failures errors>` > one `<testsuite>` per eval file > one `<testcase>` per case,
`time` in seconds with three decimals, a below-threshold case carries
`<failure message="score=0.000">Score: ...\\nReasoning: ...\\nMisses: ...</failure>` (our message adds
the first miss: `score=0.000: Output does not contain "Paris"`) and a case whose
target or judge broke carries `<error>`. Suites and classnames are named as AgentV names them (see
`suite_names`). We add what CI tools use to point at the source: the
testcase's `file` and `line`, and the testsuite's `file`.

Where score and threshold go, and why: the brief's first choice was `<properties>` inside each
`<testcase>` (pytest's `record_property`, Testmo and some parsers read them), but neither schema
allows it — the Ant schema (windyroad/JUnit-Schema) and the Jenkins xunit-plugin `junit-10.xsd`
only have `<properties>` under `<testsuite>`; pytest documents its testcase properties as breaking
schema validation and added `record_testsuite_property` for that reason; and `junit-xml` itself
cannot write them (kyrus/python-junit-xml PR #84 is still open). GitLab, dorny/test-reporter and
mikepenz/action-junit-report read the failure message and body, not testcase properties. So the
file stays schema-valid: each case's score and threshold are `<property name="<case>.score">` /
`<case>.threshold` entries under its testsuite, and also the first lines of every failure or
error body, which is where every tool shows them. The strict Ant schema is not our target: it
also forbids `file`/`line` on testcases and requires `hostname`, `timestamp` and `system-out`,
which would trade away source links for a schema no CI server enforces.
"""

from __future__ import annotations

import io
import stat
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..base.files import atomic_writer, refuse_escaping_symlink
from ..errors import ReportWriteError
from . import summarise
from .jsonl import describe_os_error, ensure_parent
from .paths import source_path, suite_path
from .rows import ADVISORY, NEVER_QUARANTINED, NOT_RUN, QUARANTINED, ReportedCase, outcome
from .selection import carried_from, selection_lines
from .text import clean, one_line, truncate

if TYPE_CHECKING:  # junit_xml is imported when a file is written (the end of a run), not at start-up
    from junit_xml import TestCase

SCHEMA_PATH = Path(__file__).with_name("junit.xsd")
"""Jenkins xunit-plugin `junit-10.xsd`; tests validate our output against it."""

# Caps keep one pathological answer (a 1 MB reply, a judge that echoes the prompt) from making the
# report unreadable or too large to upload; each cut is marked in the text.
NAME_LIMIT = 300
MESSAGE_LIMIT = 500
REASONING_LIMIT = 4000
MISS_LIMIT = 500
MISSES_SHOWN = 30
ANSWER_LIMIT = 2000
ERROR_LIMIT = 4000
CHUNK = 200
"""Test cases built into XML elements at a time."""


def dataset_of(suite: str) -> str:
    """AgentV's name for a suite without `dataset:`: the file name without `.yaml`
    (`evals/probe.eval.yaml` -> `probe.eval`); for results written before rows carried `dataset`."""
    name = suite.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".yaml", ".yml", ".jsonl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _folder(suite: str) -> str:
    path = suite.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    parts = path.rsplit("/", 1)
    return parts[0] if len(parts) == 2 and parts[0] else "."


def suite_names(groups: Sequence[tuple[str, Sequence[ReportedCase]]]) -> dict[str, str]:
    """Each eval file's `<testsuite name>` and testcase `classname`, as AgentV writes them: the suite's
    `dataset:`, else its file name without `.yaml` (`probe.eval`). CI dashboards key test history on
    these names, so a team moving from AgentV keeps its history.

    Two eval files of one run that would get the same name (`evals/a/probe.eval.yaml` and
    `evals/b/probe.eval.yaml`) both get their folder added, `probe.eval (evals/a)` and
    `probe.eval (evals/b)`, so neither hides the other's cases; the path itself stays in `file`.
    """
    base: dict[str, str] = {}
    for suite, cases in groups:
        dataset = next((c.dataset for c in cases if c.dataset), None)
        base[suite] = one_line(dataset or dataset_of(suite)) or "default"
    counts = Counter(base.values())
    names = {suite: name if counts[name] == 1 else f"{name} ({one_line(_folder(suite))})" for suite, name in base.items()}
    counts = Counter(names.values())  # the same dataset name twice in one folder: the whole path tells them apart
    return {suite: name if counts[name] == 1 else f"{base[suite]} ({one_line(suite)})" for suite, name in names.items()}


def _seconds(duration_ms: int) -> str:
    return f"{max(duration_ms, 0) / 1000:.3f}"


def _misses_text(misses: Sequence[str]) -> str:
    shown = [truncate(one_line(m), MISS_LIMIT) for m in misses[:MISSES_SHOWN]]
    more = len(misses) - len(shown)
    return "; ".join(shown) + (f"; … and {more} more" if more > 0 else "")


def _checks_lines(checks: Sequence[str]) -> list[str]:
    """Rubric checks under a `Checks:` heading, one per line (✓ met, ✗ not met, ? not assessed)."""
    if not checks:
        return []
    shown = [f"  {truncate(one_line(c), MISS_LIMIT)}" for c in checks[:MISSES_SHOWN]]
    more = len(checks) - len(shown)
    return ["Checks:", *shown, *([f"  … and {more} more"] if more > 0 else [])]


def failure_body(result: ReportedCase) -> str:
    """AgentV's three lines (Score, Reasoning, Misses), then rubric checks, the threshold and the
    start of the answer."""
    lines = [f"Score: {result.score:.3f}"]
    if result.reasoning:
        lines.append(f"Reasoning: {truncate(clean(result.reasoning), REASONING_LIMIT)}")
    if result.misses:
        lines.append(f"Misses: {_misses_text(result.misses)}")
    lines += _checks_lines(result.checks)
    lines.append(f"Threshold: {result.threshold:.3f}")
    if result.candidate_answer:
        lines.append(f"Answer: {truncate(clean(result.candidate_answer), ANSWER_LIMIT)}")
    return "\n".join(lines)


def error_body(result: ReportedCase) -> str:
    lines = [f"Error: {truncate(clean(result.error or 'unknown error'), ERROR_LIMIT)}",
             f"Score: {result.score:.3f}", f"Threshold: {result.threshold:.3f}"]
    if result.reasoning:
        lines.append(f"Reasoning: {truncate(clean(result.reasoning), REASONING_LIMIT)}")
    if result.misses:
        lines.append(f"Misses: {_misses_text(result.misses)}")
    lines += _checks_lines(result.checks)
    if result.candidate_answer:
        lines.append(f"Answer: {truncate(clean(result.candidate_answer), ANSWER_LIMIT)}")
    return "\n".join(lines)


def _first_line(text: str | None) -> str:
    for line in clean(text).split("\n"):
        if line.strip():
            return one_line(line)
    return ""


def _case_name(result: ReportedCase, with_target: bool) -> str:
    name = one_line(result.eval_id) or "(unnamed case)"
    if with_target and result.target:
        name = f"{name} [{one_line(result.target)}]"
    return truncate(name, NAME_LIMIT)


def _group_by_suite(results: Iterable[ReportedCase]) -> list[tuple[str, list[ReportedCase]]]:
    """Suites by name, cases by line then id: the same XML whatever order concurrent cases finished in."""
    groups: dict[str, list[ReportedCase]] = {}
    for r in results:
        groups.setdefault(r.suite or "default", []).append(r)
    return [(suite, sorted(cases, key=lambda r: (r.line, r.eval_id, r.target)))
            for suite, cases in sorted(groups.items())]


def _test_case(r: ReportedCase, name: str, classname: str, root: Path | None) -> TestCase:
    from junit_xml import TestCase

    tc = TestCase(name=name, classname=classname, elapsed_sec=r.duration_ms / 1000,
                  file=source_path(r, root) or None, line=r.line if r.line > 0 else None)
    base = carried_from(r)
    if base is not None:  # a dashboard must tell a verdict of this run from one taken over unrun
        tc.stdout = f"carried from the base{f' ({base})' if base else ''}: not run in this run"
    replayed = getattr(r, "replayed", None)
    if replayed:
        tc.stdout = "\n".join(filter(None, [tc.stdout, f"replayed: the agent's answer recorded at {replayed}"]))
    shown = outcome(r)
    if shown in (QUARANTINED, NOT_RUN, ADVISORY):  # reported, not failing the gate: a dashboard must not show it red
        why = (f"quarantined: {r.quarantined}" if shown == QUARANTINED else str(r.advisory) if shown == ADVISORY
               else _first_line(r.error) or "not run")
        detail = error_body(r) if r.verdict == "error" else failure_body(r)
        tc.add_skipped_info(message=truncate(why, MESSAGE_LIMIT), output=detail)
    elif r.verdict == "error":
        message = truncate(_first_line(r.error) or "error", MESSAGE_LIMIT)
        if r.quarantined:
            message = truncate(f"{NEVER_QUARANTINED}: {message}", MESSAGE_LIMIT)
        tc.add_error_info(message=message, output=error_body(r), error_type="error")
    elif r.verdict == "fail":
        # AgentV's `score=`, then the first miss: the one line a dashboard shows says what went wrong.
        miss = next((one_line(m) for m in r.misses if m), "")
        message = truncate(f"score={r.score:.3f}" + (f": {miss}" if miss else ""), MESSAGE_LIMIT)
        tc.add_failure_info(message=message, output=failure_body(r), failure_type="failure")
    return tc


def _open_tag(element: ET.Element) -> str:
    text = ET.tostring(element, encoding="unicode", short_empty_elements=False)
    return text[: -len(f"</{element.tag}>")]


def _write_suite(out: _CleanWriter, suite_name: str, cases: list[ReportedCase], root: Path | None,
                 with_target: bool) -> None:
    """One `<testsuite>`, written `CHUNK` cases at a time so a suite of any size never has all its
    XML elements in memory at once. The text is what serialising the whole suite element (built
    by junit-xml, indented by `ET.indent`) would give; a test compares the two."""
    from junit_xml import TestSuite

    classname = suite_name
    names = [_case_name(r, with_target) for r in cases]
    first_file = suite_path(cases[0], root) or None
    head = TestSuite(suite_name, [], file=first_file).build_xml_doc()
    totals = summarise(cases)
    # junit-xml counts these from its test cases; set in place so the attributes keep its order.
    head.set("errors", str(totals.errors))
    head.set("failures", str(totals.failed))
    head.set("tests", str(totals.total))
    if totals.quarantined or totals.missing_env or totals.advisory:
        head.set("skipped", str(totals.quarantined + totals.missing_env + totals.advisory))
    # junit-xml writes time as "%f" and leaves it out when zero; AgentV writes three decimals always.
    head.set("time", _seconds(sum(r.duration_ms for r in cases)))
    properties: dict[str, str] = {}  # two cases of one name (a long id cut short) share an entry, as in a dict-built suite
    for name, r in zip(names, cases, strict=True):
        properties[f"{name}.score"] = f"{r.score:.3f}"
        properties[f"{name}.threshold"] = f"{r.threshold:.3f}"
    for line in selection_lines(cases):  # "2 of 10 cases run; 8 carried from main@abc1234", a replay's source
        properties.setdefault("agentv-gate.selection", line)
        if line.startswith("replayed:"):
            properties["agentv-gate.replayed"] = line
    out.write("\n  " + _open_tag(head) + "\n    <properties>")
    for key, value in properties.items():
        out.write("\n      " + ET.tostring(ET.Element("property", {"name": key, "value": value}), encoding="unicode"))
    out.write("\n    </properties>")
    for start in range(0, len(cases), CHUNK):
        chunk = cases[start:start + CHUNK]
        tcs = [_test_case(r, name, classname, root) for r, name in zip(chunk, names[start:start + CHUNK], strict=True)]
        for r, element in zip(chunk, TestSuite(suite_name, tcs).build_xml_doc().iter("testcase"), strict=True):
            element.set("time", _seconds(r.duration_ms))
            ET.indent(element, space="  ", level=2)
            out.write("\n    ")
            ET.ElementTree(element).write(out, encoding="unicode")
    out.write("\n  </testsuite>")


class _CleanWriter:
    """Everything written through it goes through `clean`. What the builders above produce is
    already clean, but text reaching junit-xml from elsewhere (a name we did not build) must
    not be able to make the file unparseable either."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> int:
        return self._out.write(clean(text))


def write_junit_xml(results: Iterable[ReportedCase], out: TextIO, repo_root: Path | None = None) -> None:
    """The whole document, one suite at a time: only one suite's XML tree is ever in memory.

    `repo_root` (default: the working folder) anchors `file` attributes.
    """
    results = list(results)
    with_target = len({r.target for r in results}) > 1
    totals = summarise(results)
    head = ET.Element("testsuites", {"name": "agentv-gate", "tests": str(totals.total), "failures": str(totals.failed),
                                     "errors": str(totals.errors), "time": _seconds(sum(r.duration_ms for r in results))})
    writer = _CleanWriter(out)
    writer.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    groups = _group_by_suite(results)
    if not groups:
        ET.ElementTree(head).write(writer, encoding="unicode")
        writer.write("\n")
        return
    writer.write(_open_tag(head))
    names = suite_names(groups)
    for suite, cases in groups:
        _write_suite(writer, names[suite], cases, repo_root, with_target)
    writer.write("\n</testsuites>\n")


def build_junit_xml(results: Iterable[ReportedCase], repo_root: Path | None = None) -> str:
    """The whole document as text (tests, and tools that want it in memory)."""
    buffer = io.StringIO()
    write_junit_xml(results, buffer, repo_root)
    return buffer.getvalue()


def _is_special_file(path: Path) -> bool:
    """A device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named pipe), following symlinks."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_junit(results: Iterable[ReportedCase], path: Path | str, repo_root: Path | None = None) -> Path:
    """Write atomically (temp file + rename) so a reader never sees half a report.

    A device or pipe is written in place instead: renaming over `/dev/null` as root would replace
    the device node itself with a regular file.
    """
    target = Path(path)
    try:
        refuse_escaping_symlink(target)
        ensure_parent(target)
        if _is_special_file(target):
            with open(target, "w", encoding="utf-8") as fh:
                write_junit_xml(results, fh, repo_root)
        else:
            with atomic_writer(target) as fh:
                write_junit_xml(results, fh, repo_root)
    except OSError as exc:
        raise ReportWriteError(f"cannot write JUnit report to {target}: {describe_os_error(exc)}") from exc
    return target


__all__ = ["build_junit_xml", "dataset_of", "error_body", "failure_body", "suite_names", "write_junit", "write_junit_xml"]
