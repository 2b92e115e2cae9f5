"""JUnit XML: schema-valid (Jenkins junit-10.xsd), AgentV's layout, and unbreakable by hostile model text."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
import xmlschema

from agentv_gate.errors import ReportWriteError
from agentv_gate.models import CaseResult
from agentv_gate.report.junit import SCHEMA_PATH, build_junit_xml, dataset_of, write_junit
from agentv_gate.report.rows import ReportRow
from tests.helpers.reports import case_result, junit_schema

AGENTV_SAMPLE = Path("/work/shared/spec/agentv-2.18-junit-sample.xml")


case = partial(case_result, suite="evals/probe.eval.yaml", file="evals/probe.eval.yaml")


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return junit_schema()


def test_schema_file_cites_its_source() -> None:
    head = SCHEMA_PATH.read_text(encoding="utf-8")[:1200]
    assert "jenkinsci/xunit-plugin" in head and "junit-10.xsd" in head and "0c3752259ca1" in head


def test_mixed_run_is_valid_against_the_jenkins_schema(schema: xmlschema.XMLSchema) -> None:
    results = [
        case("a", line=3, duration_ms=1234),
        case("b", "fail", line=9, score=0.25, misses=["m1", "m2"], reasoning="weak", candidate_answer="hi"),
        case("c", "error", line=15, error="judge exited with code 1\nTraceback ..."),
        case("d", suite="evals/other.jsonl", file="evals/other.jsonl", line=2),
    ]
    xml = build_junit_xml(results)
    schema.validate(xml)
    root = ET.fromstring(xml)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"probe.eval", "other"}
    probe = suites["probe.eval"]
    assert (probe.get("tests"), probe.get("failures"), probe.get("errors")) == ("3", "1", "1")
    assert probe.get("file") == "evals/probe.eval.yaml"


def test_testcase_points_at_the_case_and_carries_score_and_threshold(schema: xmlschema.XMLSchema) -> None:
    xml = build_junit_xml([case("b", "fail", line=9, score=0.25, threshold=0.7, duration_ms=2)])
    root = ET.fromstring(xml)
    tc = root.find("testsuite/testcase")
    assert tc is not None
    assert tc.get("file") == "evals/probe.eval.yaml" and tc.get("line") == "9"
    assert tc.get("classname") == "probe.eval" and tc.get("time") == "0.002"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props == {"b.score": "0.250", "b.threshold": "0.700"}
    failure = tc.find("failure")
    assert failure is not None and (failure.get("message") or "").startswith("score=0.250")
    assert "Threshold: 0.700" in (failure.text or "")


def test_error_case_gets_an_error_element_with_first_line_as_message() -> None:
    xml = build_junit_xml([case("c", "error", error="target openai: HTTP 500\nbody: overloaded")])
    tc = ET.fromstring(xml).find("testsuite/testcase")
    assert tc is not None and tc.find("failure") is None
    err = tc.find("error")
    assert err is not None and err.get("message") == "target openai: HTTP 500"
    assert (err.text or "").startswith("Error: target openai: HTTP 500\nbody: overloaded\nScore: 0.000")


def test_layout_matches_agentv_sample_for_the_same_three_cases(schema: xmlschema.XMLSchema) -> None:
    """AgentV 2.18's `--output-format junit` for planet-fails/arithmetic/capital, rebuilt from our results."""
    sample = ET.parse(AGENTV_SAMPLE).getroot()
    results = [
        case("planet-fails", "fail", suite="probe.eval.yaml", file="probe.eval.yaml", line=2, score=0.0,
             reasoning="keyword-judge: 0/1 keywords found in answer", misses=["missing 'Jupiter'"],
             duration_ms=217),
        case("arithmetic", suite="probe.eval.yaml", file="probe.eval.yaml", line=8, duration_ms=202),
        case("capital", suite="probe.eval.yaml", file="probe.eval.yaml", line=14, duration_ms=183),
    ]
    xml = build_junit_xml(results)
    schema.validate(xml)
    ours = ET.fromstring(xml)

    assert ours.tag == sample.tag == "testsuites"
    for attr in ("tests", "failures", "errors"):
        assert ours.get(attr) == sample.get(attr)
    assert len(ours.findall("testsuite")) == len(sample.findall("testsuite")) == 1
    our_suite, their_suite = ours.find("testsuite"), sample.find("testsuite")
    assert our_suite is not None and their_suite is not None
    for attr in ("tests", "failures", "errors"):
        assert our_suite.get(attr) == their_suite.get(attr)
    # AgentV names the suite after its dataset, by default the file name without `.yaml`.
    assert our_suite.get("name") == their_suite.get("name") == "probe.eval"

    def cases(suite: ET.Element) -> list[tuple[str | None, str | None, str | None, list[str]]]:
        return [(tc.get("name"), tc.get("classname"), tc.get("time"), [c.tag for c in tc])
                for tc in suite.findall("testcase")]

    assert cases(our_suite) == cases(their_suite)
    our_fail, their_fail = our_suite.find("testcase/failure"), their_suite.find("testcase/failure")
    assert our_fail is not None and their_fail is not None
    assert their_fail.get("message") == "score=0.000"  # ours adds the first miss after AgentV's text
    assert (our_fail.get("message") or "").startswith("score=0.000: ")
    their_body = their_fail.text or ""
    our_body = our_fail.text or ""
    assert our_body.startswith(their_body + "\n"), (our_body, their_body)
    assert our_body[len(their_body) + 1:] == "Threshold: 0.800"


def test_hostile_text_stays_well_formed_valid_and_bounded(schema: xmlschema.XMLSchema,
                                                          tmp_path: Path) -> None:
    nasty = "a\x00b\x1b[31mRED\x1b[0m\x0bc\x0cd\x7f\ud800e\ufffe]]><!--<script>&amp;\"'\r\nnext"
    huge = "x" * 1_000_000 + "TAIL-MARKER"
    results = [
        case(f"id{nasty}", "fail", score=0.1, reasoning=nasty, misses=[nasty] * 100, candidate_answer=huge),
        case("err" + nasty, "error", error=nasty, candidate_answer=huge, target="t\x00"),
    ]
    path = write_junit(results, tmp_path / "out" / "junit.xml")
    raw = path.read_bytes()
    raw.decode("utf-8")  # strict: no lone surrogates made it to disk
    assert b"\x00" not in raw and b"\x1b" not in raw and b"\x0b" not in raw
    assert len(raw) < 120_000, "a 1 MB answer must be cut, not copied into the report"
    schema.validate(str(path))
    root = ET.parse(path).getroot()
    failure = root.find(".//failure")
    assert failure is not None
    body = failure.text or ""
    assert "RED" in body and "[31m" not in body
    assert "TAIL-MARKER" not in body and "[truncated: " in body
    assert "; … and 70 more" in body, "misses beyond the cap are counted, not silently dropped"
    tc = root.find(".//testcase")
    assert tc is not None and "\ufffd" in (tc.get("name") or "")


def test_same_xml_whatever_order_cases_finished_in() -> None:
    results = [case(str(i), line=i, suite=f"s{i % 3}.yaml", file=f"s{i % 3}.yaml") for i in range(12)]
    assert build_junit_xml(results) == build_junit_xml(list(reversed(results)))


def test_several_targets_keep_case_names_apart(schema: xmlschema.XMLSchema) -> None:
    xml = build_junit_xml([case("q", target="gpt"), case("q", "fail", target="claude")])
    schema.validate(xml)
    names = [tc.get("name") for tc in ET.fromstring(xml).iter("testcase")]
    assert sorted(names) == ["q [claude]", "q [gpt]"]


def test_absolute_suite_falls_back_to_file_relative_to_repo_root(tmp_path: Path) -> None:
    eval_file = tmp_path / "evals" / "x.yaml"
    r = case("a", suite=str(eval_file), file=str(eval_file))
    tc = ET.fromstring(build_junit_xml([r], repo_root=tmp_path)).find(".//testcase")
    assert tc is not None and tc.get("file") == "evals/x.yaml"


def test_empty_run_is_still_a_valid_document(schema: xmlschema.XMLSchema) -> None:
    xml = build_junit_xml([])
    schema.validate(xml)
    assert ET.fromstring(xml).get("tests") == "0"


@pytest.mark.parametrize("suite, expected", [
    ("probe.eval.yaml", "probe.eval"),
    ("evals/probe.eval.yaml", "probe.eval"),
    ("./evals/data.jsonl", "data"),
    ("evals\\win.yml", "win"),
])
def test_a_suite_without_a_dataset_is_named_after_its_file(suite: str, expected: str) -> None:
    assert dataset_of(suite) == expected


def test_suite_and_classname_are_the_dataset_and_same_names_are_kept_apart_by_folder() -> None:
    results = [
        case("a", suite="evals/a/probe.eval.yaml", file="evals/a/probe.eval.yaml"),
        case("b", suite="evals/b/probe.eval.yaml", file="evals/b/probe.eval.yaml"),
        case("c", suite="evals/refunds.yaml", file="evals/refunds.yaml", dataset="billing"),
    ]
    root = ET.fromstring(build_junit_xml(results))
    named = {s.get("name"): [(tc.get("classname"), tc.get("file")) for tc in s.iter("testcase")]
             for s in root.findall("testsuite")}
    assert named == {
        "probe.eval (evals/a)": [("probe.eval (evals/a)", "evals/a/probe.eval.yaml")],
        "probe.eval (evals/b)": [("probe.eval (evals/b)", "evals/b/probe.eval.yaml")],
        "billing": [("billing", "evals/refunds.yaml")],
    }


def test_unwritable_path_is_a_clear_report_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ReportWriteError, match=r"cannot write JUnit report to .*: Not a directory$"):
        write_junit([case("a")], blocker / "junit.xml")


def test_rewrite_replaces_the_whole_file_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    write_junit([case(f"c{i}") for i in range(5)], target)
    write_junit([case("only")], target)
    assert ET.parse(target).getroot().get("tests") == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml"]


def whole_tree_junit(results: list[CaseResult]) -> str:
    """The document as one junit-xml tree per suite, indented and serialised whole: what the
    streaming writer must reproduce exactly while holding only `CHUNK` test cases at a time."""
    from junit_xml import TestSuite

    from agentv_gate.report import junit, summarise

    with_target = len({r.target for r in results}) > 1
    totals = summarise(results)
    root = ET.Element("testsuites", {"name": "agentv-gate", "tests": str(totals.total), "failures": str(totals.failed),
                                     "errors": str(totals.errors),
                                     "time": junit._seconds(sum(r.duration_ms for r in results))})
    groups = junit._group_by_suite(results)
    suite_names = junit.suite_names(groups)
    for suite, cases in groups:
        tcs, properties = [], {}
        for r in cases:
            name = junit._case_name(r, with_target)
            tcs.append(junit._test_case(r, name, suite_names[suite], None))
            properties[f"{name}.score"], properties[f"{name}.threshold"] = f"{r.score:.3f}", f"{r.threshold:.3f}"
        first = junit.suite_path(cases[0], None) or None
        element = TestSuite(suite_names[suite], tcs, properties=properties, file=first).build_xml_doc()
        element.set("time", junit._seconds(sum(r.duration_ms for r in cases)))
        for r, case_el in zip(cases, element.iter("testcase"), strict=True):
            case_el.set("time", junit._seconds(r.duration_ms))
        root.append(element)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + junit.clean(ET.tostring(root, encoding="unicode")) + "\n"


@pytest.mark.parametrize("size", [0, 1, 7, 450])
def test_streamed_document_equals_the_whole_tree(size: int) -> None:
    import random

    from agentv_gate.report.junit import CHUNK

    assert size < CHUNK or size > 2 * CHUNK  # 450 spans three chunks
    rng = random.Random(size)
    results = [case(rng.choice(["a", "b\x01c", "d&<>\"'", "e\r\nf", "x" * 400]) + str(rng.randint(0, 3)),
                    rng.choice(["pass", "fail", "error"]), suite=rng.choice(["s1.yaml", "evals/s2.eval.yaml"]),
                    line=rng.randint(0, 9), target=rng.choice(["", "t1"]), score=rng.random(),
                    error=rng.choice([None, "boom\x1b[31m"]), reasoning=rng.choice([None, "why\nnot"]),
                    misses=rng.choice([[], ["m1", "m\r2"]]), candidate_answer=rng.choice(["", "ans\x00wer"]),
                    duration_ms=rng.randint(0, 5000)) for _ in range(size)]
    assert build_junit_xml(results) == whole_tree_junit(results)


def _body(xml: str) -> list[str]:
    """The lines of the one failure or error body in a one-case document."""
    tc = ET.fromstring(xml).find("testsuite/testcase")
    assert tc is not None
    element = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
    assert element is not None
    return (element.text or "").split("\n")


def _with_checks(result: CaseResult, checks: list[str]) -> ReportRow:
    """The row `run` hands the reporters, with the rubric checks a judge reported."""
    return dataclasses.replace(ReportRow.of(result), checks=tuple(checks))


@pytest.mark.parametrize("count", [2, 30, 31, 45])
def test_misses_and_checks_past_thirty_are_counted_and_never_before(count: int) -> None:
    misses = [f"m{i}" for i in range(count)]
    checks = [f"quality: ✗ [c{i}] point {i}" for i in range(count)]
    row = _with_checks(case("b", "fail", misses=misses), checks)
    lines = _body(build_junit_xml([row]))
    more = count - 30
    assert lines[1] == "Misses: " + "; ".join(misses[:30]) + (f"; … and {more} more" if more > 0 else "")
    shown = [f"  {c}" for c in checks[:30]]
    assert lines[2:lines.index("Threshold: 0.800")] == ["Checks:", *shown, *([f"  … and {more} more"] if more > 0 else [])]


def test_error_body_shows_reasoning_misses_checks_and_answer_only_when_there_are_some() -> None:
    bare = case("c", "error", error="judge exited with code 1")
    assert _body(build_junit_xml([bare])) == ["Error: judge exited with code 1", "Score: 0.000", "Threshold: 0.800"]
    full = _with_checks(case("c", "error", error="judge exited with code 1", reasoning="half scored",
                             misses=["m1", "m2"], candidate_answer="the answer"), ["quality: ? [c1] cites"])
    assert _body(build_junit_xml([full])) == [
        "Error: judge exited with code 1", "Score: 0.000", "Threshold: 0.800", "Reasoning: half scored",
        "Misses: m1; m2", "Checks:", "  quality: ? [c1] cites", "Answer: the answer"]


def _line_after(prefix: str) -> Callable[[str], str]:
    def get(xml: str) -> str:
        return next(line for line in _body(xml) if line.startswith(prefix))[len(prefix):]
    return get


def _testcase_attr(attr: str, child: str | None = None) -> Callable[[str], str]:
    def get(xml: str) -> str:
        element = ET.fromstring(xml).find("testsuite/testcase" + (f"/{child}" if child else ""))
        assert element is not None
        return element.get(attr) or ""
    return get


# The documented caps (module comment in junit.py): each piece of text is kept whole up to its cap.
CAPS: dict[str, tuple[int, Callable[[str], CaseResult | ReportRow], Callable[[str], str]]] = {
    "case name": (300, lambda t: case(t), _testcase_attr("name")),
    "error message": (500, lambda t: case("c", "error", error=t), _testcase_attr("message", "error")),
    "error body": (4000, lambda t: case("c", "error", error=t), _line_after("Error: ")),
    "reasoning": (4000, lambda t: case("b", "fail", reasoning=t), _line_after("Reasoning: ")),
    "a miss": (500, lambda t: case("b", "fail", misses=[t]), _line_after("Misses: ")),
    "a check": (500, lambda t: _with_checks(case("b", "fail"), [t]), _line_after("  ")),
    "answer": (2000, lambda t: case("b", "fail", candidate_answer=t), _line_after("Answer: ")),
}


@pytest.mark.parametrize("what", list(CAPS))
def test_each_text_is_kept_whole_up_to_its_cap_and_cut_one_character_past_it(what: str) -> None:
    cap, make, get = CAPS[what]
    at_cap = "x" * (cap - 1) + "y"
    assert get(build_junit_xml([make(at_cap)])) == at_cap
    assert get(build_junit_xml([make(at_cap + "z")])) == at_cap + "… [truncated: 1 more characters]"


@pytest.mark.parametrize("duration_ms, seconds", [(1234, "1.234"), (2, "0.002"), (0, "0.000"), (-1, "0.000")])
def test_times_are_seconds_with_three_decimals_and_never_negative(duration_ms: int, seconds: str) -> None:
    root = ET.fromstring(build_junit_xml([case("a", duration_ms=duration_ms)]))
    times = [e.get("time") for e in (root, *root.iter("testsuite"), *root.iter("testcase"))]
    assert times == [seconds] * 3


@pytest.mark.parametrize("line, shown", [(1, "1"), (12, "12"), (0, None), (-1, None)])
def test_testcase_line_is_given_only_for_a_real_line(schema: xmlschema.XMLSchema, line: int, shown: str | None) -> None:
    xml = build_junit_xml([case("a", line=line)])
    schema.validate(xml)
    tc = ET.fromstring(xml).find("testsuite/testcase")
    assert tc is not None and tc.get("line") == shown and tc.get("file") == "evals/probe.eval.yaml"


@pytest.mark.parametrize("suites, expected", [
    ({"probe.eval.yaml": None, "evals/probe.eval.yaml": None}, ["probe.eval (.)", "probe.eval (evals)"]),
    ({"./a/probe.eval.yaml": None, "./b/probe.eval.yaml": None}, ["probe.eval (a)", "probe.eval (b)"]),
    ({"/probe.eval.yaml": None, "probe.eval.yaml": None}, ["probe.eval (/probe.eval.yaml)", "probe.eval (probe.eval.yaml)"]),
    ({"evals/refunds.yaml": "billing", "evals/invoices.yaml": "billing"},
     ["billing (evals/invoices.yaml)", "billing (evals/refunds.yaml)"]),
    ({"evals/a/refunds.yaml": "billing", "evals/b/refunds.yaml": "shipping"}, ["billing", "shipping"]),
])
def test_suites_of_one_name_get_their_folder_else_their_whole_path(suites: dict[str, str | None],
                                                                    expected: list[str]) -> None:
    results = [case(f"c{i}", suite=suite, file=suite, dataset=dataset) for i, (suite, dataset) in enumerate(suites.items())]
    root = ET.fromstring(build_junit_xml(results))
    named = sorted((s.get("name") or "", [tc.get("classname") for tc in s.iter("testcase")]) for s in root.iter("testsuite"))
    assert named == [(name, [name]) for name in expected]


def test_one_target_run_names_cases_by_their_id_alone() -> None:
    """AgentV names a testcase by its id; the ` [target]` suffix only tells targets of one run apart."""
    xml = build_junit_xml([case("q", target="gpt"), case("r", "fail", target="gpt", line=2)])
    assert [tc.get("name") for tc in ET.fromstring(xml).iter("testcase")] == ["q", "r"]


def test_rows_without_a_suite_point_the_suite_at_its_first_case_file() -> None:
    results = [case("late", suite="", file="evals/b.yaml", line=30), case("early", suite="", file="evals/a.yaml", line=4)]
    suite = ET.fromstring(build_junit_xml(results)).find("testsuite")
    assert suite is not None and suite.get("name") == "default"
    assert suite.get("file") == "evals/a.yaml"
    assert [(tc.get("name"), tc.get("file")) for tc in suite.iter("testcase")] == [("early", "evals/a.yaml"),
                                                                                   ("late", "evals/b.yaml")]


def _rows_then_broken(results: list[CaseResult]) -> Iterator[CaseResult]:
    """Results read lazily from a file that turns out to be corrupt half way."""
    yield from results
    raise ValueError("results.jsonl line 3: not JSON")


@pytest.mark.parametrize("earlier", [True, False])
def test_a_write_that_fails_leaves_the_previous_report_or_none_never_a_broken_one(tmp_path: Path,
                                                                                  earlier: bool) -> None:
    target = tmp_path / "junit.xml"
    if earlier:
        write_junit([case("old")], target)
    before = target.read_bytes() if earlier else None
    with pytest.raises(ValueError, match="not JSON"):
        write_junit(_rows_then_broken([case("a"), case("b")]), target)
    assert [p.name for p in tmp_path.iterdir()] == (["junit.xml"] if earlier else [])
    if earlier:
        assert target.read_bytes() == before


def test_a_named_pipe_is_written_into_not_replaced_by_a_file(tmp_path: Path) -> None:
    """`--junit` naming a FIFO (a CI step reading the report as it is written) gets the report
    through the pipe; renaming a temp file over it would leave the reader waiting forever."""
    fifo = tmp_path / "junit.xml"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        write_junit([case("a"), case("b", "fail")], fifo)
        assert stat.S_ISFIFO(fifo.stat().st_mode), "the pipe was replaced by a regular file"
        received, _ = reader.communicate(timeout=60)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    assert ET.fromstring(received).get("tests") == "2"
