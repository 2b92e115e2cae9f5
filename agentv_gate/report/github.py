"""GitHub Actions: error annotations on the eval file lines, a job summary table, and step outputs.

Everything shown here comes partly from the model under test and its judges, i.e. from whoever
wrote the pull request. The runner treats stdout lines as workflow commands, so a reply containing
`::add-mask::`, `::set-output ...` or `::stop-commands::` must stay inert:

* An annotation is one line we start with `::error `. Its message is escaped as the toolkit's
  `escapeData` does (`%`->`%25`, CR->`%0D`, LF->`%0A`) and its properties as `escapeProperty`
  (also `:`->`%3A`, `,`->`%2C`), so model text can neither end the line nor leave the data part;
  a literal `%0A` in model text arrives as `%250A` and is shown, not decoded into a newline.
* ANSI escapes and control characters are removed first (text.clean), and `##[` is broken up
  because the runner's legacy parser finds `##[command]` anywhere in a line (text.inert_log_text).
* We never print `::stop-commands::`; untrusted text cannot start a line to print it for us.

GitHub shows at most 10 error annotations per step, dropping the rest silently, so past that the
last one says how many more there are and where to look (the job summary lists them all).

A run that never starts (exit 2: an eval file or targets.yaml that does not load, a corrupt shard
file for `merge`) is reported the same way: each located problem is annotated at its file:line
and the job summary lists them all (`write_github_problems`); `validate` does so too, and its
summary says how many files and cases are valid when none has a problem.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Container, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from ..errors import Located, ReportWriteError
from ..redaction import redact
from . import Summary, TargetTraffic, summarise
from .jsonl import describe_os_error
from .paths import display_path, source_path
from .rows import ADVISORY, NEVER_QUARANTINED, NOT_RUN, QUARANTINED, ReportedCase, outcome
from .text import case_label, clean, inert_log_text, one_line, several_targets, truncate

ANNOTATIONS_PER_STEP = 10
"""GitHub shows 10 error annotations per step (actions/toolkit docs/problem-matchers.md, "Limitations")."""

CaseId = tuple[str, str, str]
"""(suite, test id, target): one row of a run."""

SUMMARY_BUDGET_BYTES = 512 * 1024
"""Our share of a step summary; GitHub rejects a summary over 1 MiB per step, so we stay at half."""

ANNOTATION_MESSAGE_LIMIT = 4000
ANNOTATION_MISSES_SHOWN = 10
CELL_LIMIT = 300
MISSES_PER_CELL = 5


# ---------------------------------------------------------------- workflow-command escaping


def escape_data(text: str) -> str:
    """The message part of a workflow command, as @actions/core command.ts `escapeData`."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A `key=value` property of a workflow command, as @actions/core command.ts `escapeProperty`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command_text(text: object) -> str:
    return inert_log_text(clean(text))


def annotation_message(result: ReportedCase, with_target: bool = False) -> str:
    """Plain multi-line text (before escaping): why the case did not pass, misses, the judge's reasoning."""
    case = case_label(result, with_target)
    if result.verdict == "pass" and result.quarantined:
        return truncate(f"{case} passes now: lift its quarantine in .agentv/gate.yaml "
                        f"(reason given: {clean(result.quarantined)})", ANNOTATION_MESSAGE_LIMIT)
    if outcome(result) == NOT_RUN:
        why = clean(result.error or "environment variables unset").removeprefix("not run: ")  # said once
        return truncate(f"{case} was not run: {why}", ANNOTATION_MESSAGE_LIMIT)
    if result.verdict == "error":
        lines = [f"{case} could not be scored: {clean(result.error or 'unknown error')}"]
    elif result.score < result.threshold:
        lines = [f"{case} scored {result.score:.3f}, below the threshold {result.threshold:.3f}."]
    else:  # failed on something besides its score: a required evaluator, the base (the first miss says)
        lines = [f"{case} failed (score {result.score:.3f}, threshold {result.threshold:.3f})."]
    if result.misses:
        lines.append("Misses:")
        lines += [f"- {one_line(m)}" for m in result.misses[:ANNOTATION_MISSES_SHOWN]]
        if len(result.misses) > ANNOTATION_MISSES_SHOWN:
            lines.append(f"- … and {len(result.misses) - ANNOTATION_MISSES_SHOWN} more")
    if result.reasoning:
        lines.append(f"Reasoning: {clean(result.reasoning)}")
    if outcome(result) == ADVISORY:
        lines.insert(0, f"Advisory (does not fail the gate): {clean(result.advisory)}")
    if result.quarantined:
        lines.insert(0, f"{NEVER_QUARANTINED[0].upper()}{NEVER_QUARANTINED[1:]}: {clean(result.quarantined)}"
                     if result.verdict == "error" else f"Quarantined (does not fail the gate): {clean(result.quarantined)}")
    return truncate("\n".join(lines), ANNOTATION_MESSAGE_LIMIT)


def annotation_line(result: ReportedCase, root: Path | None = None, label: str | None = None,
                    level: str = "error", with_target: bool = False) -> str:
    """`::error file=...,line=...,title=...::message` pointing at the case in its eval file.

    `label` is what the change did to the case against a base run ("regressed", "still failing
    (also on base)"); `level` is `warning` for a failure that does not fail the gate (`--fail-on regression`);
    `with_target` names the target (a matrix run has a row per target)."""
    verb = "error" if result.verdict == "error" else "failed"
    verb = {"pass": "passes: lift its quarantine", QUARANTINED: f"{verb} (quarantined)",
            NOT_RUN: "not run", ADVISORY: "failed (advisory)"}.get(outcome(result), verb)
    title = f"agentv-gate: {truncate(case_label(result, with_target), 200)} {verb}" + (f" ({label})" if label else "")
    props = [f"file={escape_property(_command_text(source_path(result, root)))}"]
    if result.line > 0:
        props.append(f"line={result.line}")
    props.append(f"title={escape_property(_command_text(title))}")
    return f"::{level} {','.join(props)}::{escape_data(_command_text(annotation_message(result, with_target)))}"


def _not_passed(results: Iterable[ReportedCase]) -> list[ReportedCase]:
    """The cases to annotate: every one that did not pass, and a quarantined one that now passes."""
    bad = [r for r in results if r.verdict != "pass" or r.quarantined]
    return sorted(bad, key=lambda r: (r.suite, r.line, r.eval_id, r.target))


def annotation_lines(results: Iterable[ReportedCase], root: Path | None = None,
                     limit: int = ANNOTATIONS_PER_STEP, labels: Mapping[CaseId, str] | None = None,
                     warn_only: Container[str] = ()) -> list[str]:
    """One line per failing or erroring case, capped so the last visible annotation tells what was cut.

    With a base run, `labels` maps (suite, test id, target) to what the change did to the case, and
    cases whose label is in `warn_only` are annotated as warnings (they do not fail the gate)."""
    results = list(results)
    with_target = several_targets(results)
    bad = _not_passed(results)
    labels = labels or {}

    def line(r: ReportedCase) -> str:
        label = labels.get((r.suite, r.eval_id, r.target))
        # What does not fail the gate is no error: a quarantined case (a notice once it passes), a case not run.
        level = {"pass": "notice", QUARANTINED: "warning", NOT_RUN: "warning", ADVISORY: "warning"}.get(outcome(r),
                                                                                                       "error")
        return annotation_line(r, root, label, "warning" if label in warn_only else level, with_target)

    if len(bad) <= limit:
        return [line(r) for r in bad]
    shown = bad[: max(limit - 1, 0)]
    hidden = len(bad) - len(shown)
    note = (f"{hidden} more failing or erroring case{'s' if hidden != 1 else ''} not annotated "
            f"(GitHub shows {limit} error annotations per step); see the job summary or the JUnit report.")
    return [line(r) for r in shown] + [
        f"::error title={escape_property('agentv-gate')}::{escape_data(note)}"
    ]


# ---------------------------------------------------------------- job summary (Markdown)

_MD_SPECIAL = re.compile(r"([\\`*_\[\]~!|$])")


def md_cell(text: object, limit: int = CELL_LIMIT) -> str:
    """Text that stays inside one Markdown table cell and renders literally.

    One line (a newline would end the row), HTML special characters as entities (no tags, no
    comments that swallow the rest of the page), and the inline Markdown characters escaped:
    `|` would split the cell, backticks/`*`/`_`/`~` would format, `[`/`!` would make links and
    images, `$` would start math.
    """
    s = truncate(one_line(text), limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return _MD_SPECIAL.sub(r"\\\1", s)


_VERDICT = {"pass": "✅ pass", "fail": "❌ fail", "error": "⚠️ error", QUARANTINED: "🔕 quarantined",
            NOT_RUN: "⏸️ not run", ADVISORY: "🟡 advisory"}


def _problem_cell(result: ReportedCase) -> str:
    if result.verdict == "error":
        return "error: " + md_cell(result.error or "unknown error")
    items = [md_cell(m) for m in result.misses[:MISSES_PER_CELL]]
    if outcome(result) == ADVISORY:
        items.insert(0, md_cell(result.advisory))
    if len(result.misses) > MISSES_PER_CELL:
        items.append(f"… and {len(result.misses) - MISSES_PER_CELL} more")
    if not items and result.reasoning:
        items.append(md_cell(result.reasoning))
    return "<br>".join(items)


def _row(result: ReportedCase, with_problem: bool, root: Path | None, with_target: bool = False) -> str:
    where = f"{source_path(result, root)}:{result.line}" if result.line > 0 else source_path(result, root)
    shown = "🔕 pass: lift its quarantine" if result.verdict == "pass" and result.quarantined else outcome(result)
    verdict = _VERDICT.get(shown, shown) + (" (on the quarantine list: errors are never quarantined)"
                                            if result.verdict == "error" and result.quarantined else "")
    cells = [verdict, md_cell(case_label(result, with_target)), md_cell(where, 200),
             f"{result.score:.3f}", f"{result.threshold:.3f}"]
    if with_problem:
        cells.append(_problem_cell(result))
    return "| " + " | ".join(cells) + " |\n"


def _checks_section(result: ReportedCase, root: Path | None) -> str:
    """A failing case's rubric checks, folded: `✓` met, `✗` not met, `?` not assessed by the judge."""
    where = f"{source_path(result, root)}:{result.line}" if result.line > 0 else source_path(result, root)
    met = sum(1 for c in result.checks if ": ✓ [" in c)
    items = "".join(f"- {md_cell(c)}\n" for c in result.checks)
    return (f"<details><summary>{md_cell(result.eval_id)} ({md_cell(where, 200)}): {met} of "
            f"{len(result.checks)} checks met</summary>\n\n{items}\n</details>\n\n")


def totals_line(summary: Summary) -> str:
    # advisory verdicts pass nothing: a gate that passes with them is marked as one with warnings
    mark = ("⚠️" if summary.advisory else "✅") if summary.ok else (
        "⚠️" if summary.not_run or summary.incomplete else "❌")
    unfinished = f" · **interrupted: {summary.not_run} not run**" if summary.not_run else ""
    if summary.quarantined:
        unfinished += f" · {summary.quarantined} quarantined (not failing the gate)"
    if summary.advisory:
        unfinished += f" · {summary.advisory} advisory (a judge below its floor; not failing the gate)"
    if summary.missing_env:
        unfinished += f" · **{summary.missing_env} not run: environment variables unset**"
    return (f"{mark} **{summary.passed} passed, {summary.failed} failed, {summary.errors} "
            f"error{'s' if summary.errors != 1 else ''}** of {summary.total} "
            f"case{'s' if summary.total != 1 else ''} · pass rate {summary.pass_rate:.1%}{unfinished}")


def summary_markdown(results: Iterable[ReportedCase], *, results_path: Path | str | None = None,
                     junit_path: Path | str | None = None, report_path: Path | str | None = None,
                     root: Path | None = None,
                     budget_bytes: int = SUMMARY_BUDGET_BYTES, planned: int | None = None,
                     extra: str = "", traffic: Sequence[TargetTraffic] = (), usage_markdown: str = "") -> str:
    """The job summary: totals, then cases that did not pass (with misses), then passed ones folded away,
    then the calls each HTTP target made (`traffic`: calls, 429s, time waiting for its limits), then
    tokens and dollars per target and judge (`usage_markdown`).

    Rows stop when the next one would exceed `budget_bytes`; a closing note says how many were left
    out and names the results file that has them all.
    """
    results = list(results)
    summary = summarise(results, planned)
    with_target = several_targets(results)
    bad = _not_passed(results)
    good = sorted((r for r in results if r.verdict == "pass"), key=lambda r: (r.suite, r.line, r.eval_id))
    parts = ["## agentv-gate results\n\n", totals_line(summary) + "\n\n", extra]  # `extra`: the base comparison
    used = sum(len(p.encode()) for p in parts)
    reserve = 600  # room for the closing elements and the "left out" note
    left_out = 0

    def add(chunk: str) -> bool:
        nonlocal used
        size = len(chunk.encode())
        if used + size > budget_bytes - reserve:
            return False
        parts.append(chunk)
        used += size
        return True

    if bad:
        add("| Verdict | Case | Where | Score | Threshold | Misses / error |\n"
            "| --- | --- | --- | ---: | ---: | --- |\n")
        for i, r in enumerate(bad):
            if not add(_row(r, True, root, with_target)):
                left_out += len(bad) - i + len(good)
                good = []
                break
        parts.append("\n")
        with_checks = [r for r in bad if r.checks]
        if with_checks and add("#### Rubric checks\n\n"):
            for r in with_checks:
                if not add(_checks_section(r, root)):
                    break
    if good:
        header = (f"<details><summary>{len(good)} passed case{'s' if len(good) != 1 else ''}</summary>\n\n"
                  "| Verdict | Case | Where | Score | Threshold |\n| --- | --- | --- | ---: | ---: |\n")
        if add(header):
            for i, r in enumerate(good):
                if not add(_row(r, False, root, with_target)):
                    left_out += len(good) - i
                    break
            parts.append("\n</details>\n\n")
        else:
            left_out += len(good)
    if left_out:
        where = md_cell(results_path, 200) if results_path else "the results JSONL"
        rows = f"{left_out} more row{'s' if left_out != 1 else ''}"
        parts.append(f"_{rows} left out to keep this summary under GitHub's size limit; "
                     f"every case is in {where}._\n\n")
    if traffic:
        parts.append("| Target | Calls | Answered 429 | Waiting for its limits |\n| --- | ---: | ---: | ---: |\n"
                     + "".join(f"| {md_cell(t.target, 200)} | {t.calls} | {t.rate_limited} | {t.waited_seconds:.1f} s |\n"
                               for t in traffic) + "\n")
    parts.append(usage_markdown)
    files = [f"JUnit: {md_cell(junit_path, 200)}" if junit_path else "",
             f"results: {md_cell(results_path, 200)}" if results_path else "",
             f"report: {md_cell(report_path, 200)}" if report_path else ""]
    if any(files):
        parts.append(" · ".join(f for f in files if f) + "\n")
    return "".join(parts)


# ---------------------------------------------------------------- configuration problems

_PROBLEM_TITLES = {"error": "agentv-gate: configuration error", "warning": "agentv-gate: configuration warning"}
_PROBLEM_MARKS = {"error": "❌ error", "warning": "⚠️ warning"}


def problem_where(problem: Located, root: Path | None = None) -> str:
    """The problem's file relative to the checkout (`root`), with forward slashes, as annotations want it."""
    return display_path(str(problem.file), root)


def _problem_text(problem: Located) -> str:
    """The problem as annotations and the summary show it: a value read from a secret `${{ VAR }}`
    (registered while the eval files loaded) hidden, as on the log line."""
    return redact(problem.message + (f" (expected {problem.expected})" if problem.expected else ""))


def problem_annotation(problem: Located, root: Path | None = None) -> str:
    """`::error file=...,line=...,title=...::message` (`::warning` for a warning) at the problem's place."""
    kind = "warning" if problem.severity == "warning" else "error"
    props = [f"file={escape_property(_command_text(problem_where(problem, root)))}"]
    if problem.line > 0:
        props.append(f"line={problem.line}")
    props.append(f"title={escape_property(_PROBLEM_TITLES[kind])}")
    message = truncate(clean(_problem_text(problem)), ANNOTATION_MESSAGE_LIMIT)
    return f"::{kind} {','.join(props)}::{escape_data(_command_text(message))}"


def problem_annotations(problems: Sequence[Located], message: str | None = None, root: Path | None = None,
                        limit: int = ANNOTATIONS_PER_STEP) -> list[str]:
    """One annotation per problem (errors first), at most `limit` of each kind; `message` alone when none is located.

    Past the limit the last annotation of that kind says how many more the job summary lists.
    """
    if not problems:
        if not message:
            return []
        text = truncate(clean(redact(message)), ANNOTATION_MESSAGE_LIMIT)
        return [f"::error title={escape_property(_PROBLEM_TITLES['error'])}::{escape_data(_command_text(text))}"]
    lines: list[str] = []
    for kind in ("error", "warning"):
        of_kind = [p for p in problems if (p.severity == "warning") == (kind == "warning")]
        shown = of_kind if len(of_kind) <= limit else of_kind[: max(limit - 1, 0)]
        lines += [problem_annotation(p, root) for p in shown]
        hidden = len(of_kind) - len(shown)
        if hidden:
            note = (f"{hidden} more configuration {kind}{'s' if hidden != 1 else ''} not annotated (GitHub shows "
                    f"{limit} per step); the job summary lists them all.")
            lines.append(f"::{kind} title={escape_property(_PROBLEM_TITLES[kind])}::{escape_data(note)}")
    return lines


def problems_markdown(heading: str, lead: str, problems: Sequence[Located], root: Path | None = None,
                      budget_bytes: int = SUMMARY_BUDGET_BYTES) -> str:
    """A job summary section: `### agentv-gate: heading`, the lead sentence, and a table of the problems.

    Rows stop at `budget_bytes`, with a note of how many were left out (the log has every one).
    """
    parts = [f"### agentv-gate: {heading}\n\n", f"{lead}\n\n"]
    if problems:
        parts.append("| | Where | Problem |\n| --- | --- | --- |\n")
    used = sum(len(p.encode()) for p in parts)
    ordered = sorted(problems, key=lambda p: p.severity == "warning")
    for i, problem in enumerate(ordered):
        where = problem_where(problem, root) + (f":{problem.line}" if problem.line > 0 else "")
        row = (f"| {_PROBLEM_MARKS.get(problem.severity, problem.severity)} | {md_cell(where, 200)} | "
               f"{md_cell(_problem_text(problem), 2000)} |\n")
        if used + len(row.encode()) > budget_bytes - 600:
            left = len(ordered) - i
            parts.append(f"\n_{left} more problem{'s' if left != 1 else ''} left out to keep this summary "
                         "under GitHub's size limit; the log of this step lists them all._\n")
            break
        parts.append(row)
        used += len(row.encode())
    return "".join(parts) + "\n"


def write_github_problems(heading: str, lead: str, problems: Sequence[Located], *, message: str | None = None,
                          env: Mapping[str, str] | None = None, stream: TextIO | None = None) -> bool:
    """Annotations for `problems` (or the one `message`) to `stream`, and a summary section to `$GITHUB_STEP_SUMMARY`.

    Does nothing unless `GITHUB_ACTIONS=true`; returns whether it ran. Paths are made relative to
    `$GITHUB_WORKSPACE`. A summary that cannot be written raises `ReportWriteError` after the
    annotations were printed.
    """
    env = os.environ if env is None else env
    if env.get("GITHUB_ACTIONS") != "true":
        return False
    root = Path(env["GITHUB_WORKSPACE"]) if env.get("GITHUB_WORKSPACE") else None
    out = stream or sys.stdout
    for line in problem_annotations(problems, message, root):
        out.write(line + "\n")
    out.flush()
    if env.get("GITHUB_STEP_SUMMARY"):
        append_step_summary(problems_markdown(heading, lead, problems, root), env["GITHUB_STEP_SUMMARY"])
    return True


# ---------------------------------------------------------------- files the runner reads


def _append(path: Path, text: str, what: str) -> None:
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise ReportWriteError(f"cannot write {what} to {path}: {describe_os_error(exc)}") from exc


def append_step_summary(markdown: str, path: Path | str) -> None:
    """Append (never overwrite: earlier steps' summaries share the file)."""
    _append(Path(path), markdown if markdown.endswith("\n") else markdown + "\n", "the job summary")


def format_outputs(values: Mapping[str, object]) -> str:
    """`name=value` lines, or `name<<DELIM` heredocs with a random delimiter for multi-line values.

    The delimiter is random (as @actions/core `prepareKeyValueMessage` does) so that a value
    cannot end the heredoc early and smuggle in outputs of its own.
    """
    out = []
    for name, raw in values.items():
        value = "" if raw is None else str(raw)
        if "\n" in value or "\r" in value:
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            while delimiter in value:
                delimiter = f"ghadelimiter_{uuid.uuid4()}"
            out.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            out.append(f"{name}={value}\n")
    return "".join(out)


def workspace_path(path: Path | str | None, root: Path | None = None) -> str:
    """A report's path as later steps of the job can use it: relative to the checkout (`root`,
    `$GITHUB_WORKSPACE`) when inside it, else absolute (as given when there is no `root`).

    The CLI runs in the action's `working-directory`, but the workflow's next steps (publishing
    the JUnit file, uploading the artifact) start from the workspace root, so a path relative
    to the working directory would miss the file in a monorepo.
    """
    if path is None or str(path) == "":
        return ""
    if root is None:  # not on a runner: the path as the command line gave it
        return str(path)
    absolute = Path(os.path.abspath(path))
    # As written first; then with symlinks resolved (a workspace path through a symlink).
    for inside, base in ((absolute, Path(os.path.abspath(root))), (absolute.resolve(), Path(root).resolve())):
        try:
            return inside.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(absolute)


def output_values(summary: Summary, junit_path: Path | str | None = None,
                  results_path: Path | str | None = None, report_path: Path | str | None = None,
                  root: Path | None = None) -> dict[str, str]:
    """The step outputs; `pass-rate` is a fraction 0..1 (like thresholds) with four decimals; paths as
    `workspace_path` gives them. The counts add up: passed + failed + errors + quarantined + advisory +
    not-run = total, `not-run` holding the cases left out for unset variables and those an interrupted run
    never finished (these last are not in `pass-rate`)."""
    return {
        "pass-rate": f"{summary.pass_rate:.4f}",
        "passed": str(summary.passed),
        "failed": str(summary.failed),
        "errors": str(summary.errors),
        "quarantined": str(summary.quarantined),
        "advisory": str(summary.advisory),
        "total": str(summary.total + summary.not_run),
        "not-run": str(summary.not_run + summary.missing_env),
        "junit-path": workspace_path(junit_path, root),
        "results-path": workspace_path(results_path, root),
        "report-path": workspace_path(report_path, root),
    }


def write_outputs(path: Path | str, values: Mapping[str, object]) -> None:
    _append(Path(path), format_outputs(values), "step outputs")


def write_github_reports(results: Iterable[ReportedCase], *, junit_path: Path | str | None = None,
                         results_path: Path | str | None = None, report_path: Path | str | None = None,
                         env: Mapping[str, str] | None = None, stream: TextIO | None = None,
                         planned: int | None = None,
                         labels: Mapping[CaseId, str] | None = None, warn_only: Container[str] = (),
                         extra_markdown: str = "", traffic: Sequence[TargetTraffic] = (),
                         usage_markdown: str = "") -> bool:
    """Annotations to `stream` (stdout), summary to `$GITHUB_STEP_SUMMARY`, outputs to `$GITHUB_OUTPUT`.

    Does nothing unless `GITHUB_ACTIONS=true`; returns whether it ran. Paths are made relative to
    `$GITHUB_WORKSPACE` (the checkout) when a case has no repo-relative suite path. A file that
    cannot be written raises `ReportWriteError` after the other reports were still attempted.
    """
    env = os.environ if env is None else env
    if env.get("GITHUB_ACTIONS") != "true":
        return False
    results = list(results)
    root = Path(env["GITHUB_WORKSPACE"]) if env.get("GITHUB_WORKSPACE") else None
    out = stream or sys.stdout
    for line in annotation_lines(results, root, labels=labels, warn_only=warn_only):
        out.write(line + "\n")
    out.flush()
    failures: list[ReportWriteError] = []
    if env.get("GITHUB_STEP_SUMMARY"):
        try:
            append_step_summary(summary_markdown(results, results_path=workspace_path(results_path, root) or None,
                                                 junit_path=workspace_path(junit_path, root) or None,
                                                 report_path=workspace_path(report_path, root) or None,
                                                 root=root, planned=planned, extra=extra_markdown, traffic=traffic,
                                                 usage_markdown=usage_markdown),
                                env["GITHUB_STEP_SUMMARY"])
        except ReportWriteError as exc:
            failures.append(exc)
    if env.get("GITHUB_OUTPUT"):
        try:
            write_outputs(env["GITHUB_OUTPUT"], output_values(summarise(results, planned), junit_path, results_path,
                                                              report_path, root))
        except ReportWriteError as exc:
            failures.append(exc)
    if failures:
        raise ReportWriteError("; ".join(str(f) for f in failures))
    return True


__all__ = [
    "annotation_line", "annotation_lines", "annotation_message", "append_step_summary", "escape_data",
    "escape_property", "format_outputs", "md_cell", "output_values", "problem_annotation", "problem_annotations",
    "problems_markdown", "summary_markdown", "write_github_problems", "write_github_reports", "write_outputs",
]
