"""GitHub reporting: exact annotation escaping, what the runner would make of our stdout, summary, outputs."""

from __future__ import annotations

import io
import re
from functools import partial
from pathlib import Path

import pytest

from agentv_gate.errors import ReportWriteError
from agentv_gate.models import CaseResult
from agentv_gate.report.console import ConsoleReporter
from agentv_gate.report.github import (
    annotation_line,
    annotation_lines,
    escape_data,
    escape_property,
    format_outputs,
    md_cell,
    summary_markdown,
    write_github_reports,
)
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import parse_github_output
from tests.helpers.reports import case_result

case = partial(case_result, suite="evals/sec.eval.yaml", file="/ci/work/evals/sec.eval.yaml")


HOSTILE = case(
    "hostile-1", "fail", line=12, score=0.25,
    misses=["::set-output name=x::y", "::add-mask::secret"],
    reasoning="%0A::error::pwned\r\n\x1b[31mred\x1b[0m ##[add-mask]s, a:b",
)


# ---------------------------------------------------------------- a model of the runner's parser
# Mirrors actions/runner src/Runner.Common/ActionCommand.cs: TryParseV2 (`::cmd k=v,k=v::data`
# after trimming leading space), then the legacy TryParse (`##[cmd k=v;]data` anywhere in a line),
# with the runner's own unescape tables applied in the runner's order.

_DATA_UNESCAPES = [("%0D", "\r"), ("%0A", "\n"), ("%25", "%")]
_PROPERTY_UNESCAPES = [("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")]
REGISTERED = {"error", "warning", "notice", "debug", "set-output", "add-mask", "stop-commands", "save-state",
              "set-env", "add-path", "group", "endgroup", "echo", "add-matcher", "remove-matcher"}


def _unescape(text: str, table: list[tuple[str, str]]) -> str:
    for escaped, raw in table:
        text = text.replace(escaped, raw)
    return text


def runner_parse(line: str) -> tuple[str, dict[str, str], str] | None:
    msg = line.lstrip()
    if msg.startswith("::"):
        end = msg.find("::", 2)
        if end >= 0:
            info = msg[2:end]
            name, _, props_text = info.partition(" ")
            if name in REGISTERED:
                props = {}
                for item in props_text.strip().split(","):
                    key, sep, value = item.partition("=")
                    if sep and key and value:
                        props[key] = _unescape(value, _PROPERTY_UNESCAPES)
                return name, props, _unescape(msg[end + 2:], _DATA_UNESCAPES)
    start = line.find("##[")
    if start >= 0:
        close = line.find("]", start)
        if close >= 0:
            name = line[start + 3:close].split(" ")[0]
            if name in REGISTERED:
                return name, {}, line[close + 1:]
    return None


def commands_in(output: str) -> list[tuple[str, dict[str, str], str]]:
    found = []
    for line in output.split("\n"):
        parsed = runner_parse(line)
        if parsed is not None:
            found.append(parsed)
    return found


# ---------------------------------------------------------------- escaping


def test_escaping_follows_the_toolkit() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("%0A") == "%250A"


def test_exact_annotation_line_for_hostile_model_output() -> None:
    assert annotation_line(HOSTILE) == (
        "::error file=evals/sec.eval.yaml,line=12,title=agentv-gate%3A hostile-1 failed::"
        "hostile-1 scored 0.250, below the threshold 0.800."
        "%0AMisses:%0A- ::set-output name=x::y%0A- ::add-mask::secret"
        "%0AReasoning: %250A::error::pwned%0Ared ## [add-mask]s, a:b"
    )


def test_exact_annotation_line_escapes_properties_and_errors() -> None:
    r = case("a,b:c", "error", suite="evals/we,ird:name.yaml", line=3, error="judge timed out\n\x00after 60s")
    assert annotation_line(r) == (
        "::error file=evals/we%2Cird%3Aname.yaml,line=3,title=agentv-gate%3A a%2Cb%3Ac error::"
        "a,b:c could not be scored: judge timed out%0A\ufffdafter 60s"
    )


def test_runner_sees_only_our_error_commands_with_the_text_intact() -> None:
    """Annotations plus the console table for hostile results: no command but ours reaches the runner."""
    evil = [
        HOSTILE,
        case("::add-mask::id", "fail", line=20, misses=["##[stop-commands]tok", "x\n::stop-commands::tok"],
             reasoning="\n::set-output name=pwned::1\n%0A::add-mask::x"),
        case("##[set-output name=y;]1", "error", line=30, error="::warning::boom\r::error::x"),
        case("fine", line=40),
    ]
    stdout = io.StringIO()
    env = {"GITHUB_ACTIONS": "true"}
    write_github_reports(evil, env=env, stream=stdout)
    ConsoleReporter(progress=io.StringIO(), out=stdout, colour=False).finish(evil)
    commands = commands_in(stdout.getvalue())
    assert [name for name, _, _ in commands] == ["error", "error", "error"]
    by_line = {props["line"]: (props, data) for _, props, data in commands}
    assert set(by_line) == {"12", "20", "30"}
    props, data = by_line["12"]
    assert props == {"file": "evals/sec.eval.yaml", "line": "12", "title": "agentv-gate: hostile-1 failed"}
    # The runner shows the model's literal "%0A" as text, not as a line break.
    assert "Reasoning: %0A::error::pwned\nred ## [add-mask]s, a:b" in data
    assert by_line["30"][0]["title"] == "agentv-gate: ## [set-output name=y;]1 error"


def test_more_failures_than_github_shows_end_with_a_count() -> None:
    results = [case(f"c{i:02d}", "fail", line=i + 1) for i in range(15)] + [case("ok")]
    lines = annotation_lines(results)
    assert len(lines) == 10
    assert all(line.startswith("::error file=evals/sec.eval.yaml,line=") for line in lines[:9])
    assert lines[-1] == ("::error title=agentv-gate::6 more failing or erroring cases not annotated (GitHub "
                         "shows 10 error annotations per step); see the job summary or the JUnit report.")
    ten = annotation_lines(results[:10])
    assert len(ten) == 10 and "more failing" not in ten[-1]


def test_annotation_path_is_relative_to_the_workspace_when_suite_is_absolute(tmp_path: Path) -> None:
    eval_file = tmp_path / "evals" / "x.yaml"
    r = case("a", "fail", suite=str(eval_file), file=str(eval_file), line=4)
    out = io.StringIO()
    write_github_reports([r], env={"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path)}, stream=out)
    assert out.getvalue().startswith("::error file=evals/x.yaml,line=4,")


# ---------------------------------------------------------------- job summary

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def table_rows(markdown: str) -> list[list[str]]:
    return [[c.strip() for c in _UNESCAPED_PIPE.split(line)[1:-1]]
            for line in markdown.splitlines() if line.startswith("| ")]


def test_summary_is_appended_with_totals_and_failures_first(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.md"
    summary_file.write_text("# earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    results = [case("p1", line=1), HOSTILE, case("e1", "error", line=30, error="judge crashed"),
               case("p2", line=2)]
    assert write_github_reports(results, junit_path="out/junit.xml", results_path="out/results.jsonl",
                                stream=io.StringIO())
    text = summary_file.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n## agentv-gate results")
    assert "❌ **2 passed, 1 failed, 1 error** of 4 cases · pass rate 50.0%" in text
    rows = table_rows(text)
    cases = [r[1] for r in rows if r[0] != "Verdict" and not r[0].startswith("---")]
    assert cases == ["hostile-1", "e1", "p1", "p2"]
    hostile = next(r for r in rows if r[1] == "hostile-1")
    assert hostile[2:6] == ["evals/sec.eval.yaml:12", "0.250", "0.800",
                            "::set-output name=x::y<br>::add-mask::secret"]
    assert text.index("hostile-1") < text.index("<details>") < text.index("p1")


def test_summary_cells_cannot_break_the_table_or_inject_html() -> None:
    nasty = ("a|b`c`<script>alert(1)</script>\n| injected | row |\n"
             "<!-- ![x](http://e/x.png) [l](javascript:x) $x$")
    md = summary_markdown([case(nasty, "fail", misses=[nasty], reasoning=nasty)])
    rows = table_rows(md)
    assert len(rows) == 3 and all(len(r) == 6 for r in rows)
    assert "<script" not in md and "<!--" not in md and "injected |" not in md
    assert md_cell(nasty).startswith(r"a\|b\`c\`&lt;script&gt;alert(1)&lt;/script&gt; \| injected \| row \|")
    assert r"\!\[x\](http://e/x.png)" in md and r"\$x\$" in md


def test_summary_stays_within_budget_and_says_what_it_left_out() -> None:
    results = [case(f"case-{i}", "fail", line=i, misses=["m" * 400] * 6) for i in range(3000)]
    results += [case(f"ok-{i}", line=i) for i in range(500)]
    md = summary_markdown(results, results_path="out/results.jsonl", budget_bytes=40_000)
    assert len(md.encode()) <= 40_000
    shown = len([r for r in table_rows(md) if r[1].startswith(("case-", "ok-"))])
    assert 0 < shown < 3500
    assert f"_{3500 - shown} more rows left out to keep this summary under GitHub's size limit; " \
           "every case is in out/results.jsonl._" in md
    full = summary_markdown(results)
    assert len(full.encode()) < 1024 * 1024


# ---------------------------------------------------------------- step outputs


def test_outputs_are_written_to_github_output(tmp_path: Path) -> None:
    out_file = tmp_path / "output"
    out_file.write_text("earlier=1\n", encoding="utf-8")
    results = [case("a"), HOSTILE, case("b", "error", error="x"), case("c")]
    write_github_reports(results, junit_path=Path("o/junit.xml"), results_path=Path("o/results.jsonl"),
                         env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(out_file)}, stream=io.StringIO())
    text = out_file.read_text(encoding="utf-8")
    assert "pass-rate=0.5000\n" in text and "failed=1\n" in text and "junit-path=o/junit.xml\n" in text
    assert parse_github_output(text) == {"earlier": "1", "pass-rate": "0.5000", "passed": "2", "failed": "1",
                                  "errors": "1", "quarantined": "0", "advisory": "0", "total": "4", "not-run": "0",
                                      "junit-path": "o/junit.xml",
                                  "results-path": "o/results.jsonl", "report-path": ""}


def test_multiline_output_uses_a_random_delimiter_that_cannot_be_forged() -> None:
    forged = "first\nghadelimiter_0\ninjected=1\nEOF"
    text = format_outputs({"results-path": forged, "total": "3"})
    header = text.split("\n")[0]
    assert re.fullmatch(r"results-path<<ghadelimiter_[0-9a-f-]{36}", header)
    assert format_outputs({"results-path": forged}).split("\n")[0] != header
    assert parse_github_output(text) == {"results-path": forged, "total": "3"}


def test_a_value_with_a_bare_carriage_return_uses_the_multiline_form() -> None:
    """The runner ends a line at CR too: `name=a\rb` would cut the value and leave `b` as a bad line."""
    text = format_outputs({"junit-path": "out\rinjected=1", "total": "3"})
    assert re.match(r"junit-path<<ghadelimiter_[0-9a-f-]{36}\n", text)
    assert not [line for line in text.split("\n") if "\r" in line and "=" in line.split("\r")[0]]
    assert parse_github_output(text) == {"junit-path": "out\rinjected=1", "total": "3"}


def test_through_the_cli_a_report_path_with_a_carriage_return_reaches_github_output_whole(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path / "evals/s.eval.yaml", """
        tests:
          - id: ok
            input: q
            assert: [{type: contains, value: ok}]
    """)
    out_file = tmp_path / "github_output"
    proc = run_cli("run", "evals", "--junit", "junit\r.xml", cwd=tmp_path,
                   env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(out_file)})
    assert proc.returncode == 0, proc.stderr
    text = out_file.read_bytes().decode("utf-8")  # as written: read_text would turn CR into LF
    assert re.search(r"^junit-path<<ghadelimiter_", text, re.M), text
    assert parse_github_output(text)["junit-path"] == "junit\r.xml"


def test_nothing_happens_outside_github_actions(tmp_path: Path) -> None:
    out, summary = tmp_path / "o", tmp_path / "s"
    stream = io.StringIO()
    env = {"GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    ran = write_github_reports([HOSTILE], env=env, stream=stream)
    assert ran is False and stream.getvalue() == "" and not out.exists() and not summary.exists()


def test_unwritable_output_file_is_a_clear_error_and_the_summary_is_still_written(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(blocker / "out"),
           "GITHUB_STEP_SUMMARY": str(summary)}
    with pytest.raises(ReportWriteError, match=r"cannot write step outputs to .*file/out: "):
        write_github_reports([HOSTILE], env=env, stream=io.StringIO())
    assert "hostile-1" in summary.read_text(encoding="utf-8")


def test_an_interrupted_run_never_reads_as_a_pass() -> None:
    finished = [CaseResult(eval_id=f"c{i}", suite="s.yaml", file="s.yaml", line=i, score=1.0, verdict="pass")
                for i in range(2)]
    markdown = summary_markdown(finished, planned=5)
    assert "⚠️ **2 passed, 0 failed, 0 errors** of 2 cases · pass rate 100.0% · **interrupted: 3 not run**" in markdown
    assert "✅ **" not in markdown  # the totals line; passed rows keep their own marks
    complete = summary_markdown(finished, planned=2)
    assert "✅ **2 passed" in complete and "interrupted" not in complete
    out = io.StringIO()
    text = ConsoleReporter(out=out, progress=io.StringIO()).finish(finished, planned=5)
    assert text.rstrip().endswith("agentv-gate INTERRUPTED: 2 cases: 2 passed, 0 failed, 0 errors, 3 not run (interrupted) "
                                  "(pass rate 100.0%)")
