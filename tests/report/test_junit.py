"""JUnit XML: schema-valid (Jenkins junit-10.xsd), AgentV's layout, and unbreakable by hostile model text."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path

import pytest
import xmlschema

from agentv_gate.errors import ReportWriteError
from agentv_gate.models import CaseResult
from agentv_gate.report.junit import SCHEMA_PATH, build_junit_xml, dataset_of, write_junit
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
    assert failure is not None and failure.get("message") == "score=0.250"
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
    assert our_fail.get("message") == their_fail.get("message") == "score=0.000"
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
