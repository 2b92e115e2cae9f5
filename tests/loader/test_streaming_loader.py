"""Suites are read one case at a time: same cases and lines as a whole-document load, memory flat in N."""

from __future__ import annotations

import gc
import re
import sys
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import agentv_gate.loader.plan as loader_module
from agentv_gate.cli import main
from agentv_gate.errors import EXIT_INTERNAL, EvalFileError
from agentv_gate.loader import load_eval_file, plan_paths
from agentv_gate.report.jsonl import read_results
from agentv_gate.transport.process import allow_new_scripts
from agentv_gate.yaml_reader import CaseList, load_yaml_text, read_suite
from tests.helpers.files import write

LIST_KEYS = ("evalcases", "eval_cases", "tests", "cases")


def streamed(text: str) -> tuple[Any, list[tuple[int, Any]]]:
    header = read_suite(text, LIST_KEYS)
    if isinstance(header, CaseList):
        return {}, list(header.entries())
    key = next(k for k in LIST_KEYS if isinstance(header.get(k), CaseList))
    return {k: v for k, v in header.items() if k != key}, list(header[key].entries())


def whole(text: str) -> tuple[Any, list[tuple[int, Any]]]:
    doc = load_yaml_text(text)
    if isinstance(doc, list):
        return {}, list(zip(doc.item_lines, doc, strict=True))
    key = next(k for k in LIST_KEYS if isinstance(doc.get(k), list))
    cases = doc[key]
    return {k: v for k, v in doc.items() if k != key}, list(zip(cases.item_lines, cases, strict=True))


scalars = st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3)),
                      max_leaves=8)
case_maps = st.dictionaries(st.sampled_from(["id", "criteria", "input", "assert", "metadata"]), values, min_size=1)


@settings(max_examples=60, deadline=None)
@given(before=st.dictionaries(st.sampled_from(["description", "execution", "target"]), values, max_size=2),
       after=st.dictionaries(st.sampled_from(["threshold", "assert", "name"]), values, max_size=2),
       cases=st.lists(st.one_of(case_maps, scalars), max_size=5), key=st.sampled_from(["tests", "evalcases"]),
       flow=st.sampled_from([False, None]), root_list=st.booleans())
def test_entries_and_their_lines_equal_a_whole_document_load(before: dict[str, Any], after: dict[str, Any],
                                                             cases: list[Any], key: str, flow: bool | None,
                                                             root_list: bool) -> None:
    doc: Any = cases if root_list else {**before, key: cases, **after}
    text = yaml.safe_dump(doc, default_flow_style=flow, sort_keys=False, allow_unicode=True)
    assert streamed(text) == whole(text)


def test_anchors_and_aliases_resolve_as_in_a_whole_load() -> None:
    text = textwrap.dedent("""
        description: &about shared text
        tests:
          - id: one
            criteria: *about
            assert: &checks [{type: contains, value: Paris}]
          - id: two
            input: &question What is the capital of France?
          - id: three
            input: *question
            assert: *checks
        threshold: 0.7
        """).lstrip("\n")
    header, entries = streamed(text)
    assert (header, entries) == whole(text)
    assert header["description"] == "shared text" and header["threshold"] == 0.7
    assert [line for line, _ in entries] == [3, 6, 8]
    assert entries[2][1]["input"] == "What is the capital of France?" and entries[2][1]["assert"] == [
        {"type": "contains", "value": "Paris"}]


@pytest.mark.parametrize(("text", "line"), [
    ("x: &common {criteria: c}\n<<: *common\ntests:\n  - id: one\n", 2),
    ("tests:\n  - &one {id: one, criteria: c}\n  - <<: *one\n    id: two\n", 3),
    ("tests:\n  - id: one\n    assert:\n      - &c {type: contains, value: x}\n      - {<<: *c, weight: 2}\n", 5),
])
def test_a_merge_key_is_refused_at_its_line_by_both_loaders(text: str, line: int) -> None:
    # AgentV 2.19 reads YAML 1.2, where `<<` is an ordinary key: nothing is merged (yaml12.py).
    with pytest.raises(EvalFileError) as whole_error:
        whole(text)
    try:
        header = read_suite(text, LIST_KEYS)
        key = next(k for k in LIST_KEYS if isinstance(header.get(k), CaseList))
        found = [value for _, value in header[key].entries() if isinstance(value, EvalFileError)]
        assert len(found) == 1
        streamed_error = found[0]
    except EvalFileError as exc:
        streamed_error = exc
    for error in (whole_error.value, streamed_error):
        assert error.line == line
        assert error.message.startswith("'<<' merge keys are not read: AgentV reads YAML 1.2")


def test_settings_written_after_the_cases_still_apply_to_every_case(repo: Path) -> None:
    f = write(repo / "evals/late.eval.yaml", """
        tests:
          - id: a
            criteria: c
            input: q
          - id: b
            criteria: c
            input: q
        threshold: 0.9
        assert:
          - type: contains
            value: Paris
        """)
    result = load_eval_file(f, repo)
    assert not result.problems
    assert [(c.id, c.threshold, [e.type for e in c.evaluators]) for c in result.cases] == [
        ("a", 0.9, ["contains"]), ("b", 0.9, ["contains"])]


def test_a_case_repeating_a_key_is_one_problem_and_the_others_load(repo: Path) -> None:
    f = write(repo / "evals/dup.eval.yaml", """
        tests:
          - id: a
            criteria: c
            input: q
          - id: b
            criteria: c
            criteria: again
            input: q
          - id: c
            criteria: c
            input: q
        """)
    result = load_eval_file(f, repo)
    assert [c.id for c in result.cases] == ["a", "c"]
    assert [(p.line, p.message) for p in result.problems] == [(7, "duplicate key 'criteria' (first at line 6)")]


def test_a_malformed_jsonl_row_is_one_problem_and_the_others_load(repo: Path) -> None:
    f = write(repo / "evals/rows.jsonl", """
        {"id": "a", "criteria": "c", "input": "q"}
        {"id": "b", "criteria": "c", "input": "q"
        {"id": "c", "criteria": "c", "input": "q"}
        """)
    result = load_eval_file(f, repo)
    assert [c.id for c in result.cases] == ["a", "c"]
    assert [(p.line, p.message.split(":")[0]) for p in result.problems] == [(2, "malformed JSON")]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("tests:\n  - id: a\n---\ntests: []\n", 3, "a second YAML document in the file"),
    ("tests:\n  - id: a\n    input: [unclosed\n  - id: b\n", 4, "malformed YAML"),
    ("tests:\n  - id: a\ntests:\n  - id: b\n", 3, "duplicate key 'tests' (first at line 1)"),
])
def test_whole_file_problems_are_located(text: str, line: int, message: str) -> None:
    with pytest.raises(EvalFileError) as caught:
        read_suite(text, LIST_KEYS)
    assert caught.value.line == line and caught.value.message.startswith(message)


def suite_text(n: int) -> str:
    rows = [f"  - id: case-{i:05d}\n    criteria: names Paris ({i})\n    input: What is the capital of France? ({i})\n"
            "    assert:\n      - type: contains\n        value: Paris\n" for i in range(n)]
    return "description: generated\ntests:\n" + "".join(rows)


def test_reading_again_gives_the_cases_the_plan_saw(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = write(repo / "evals/s.eval.yaml", suite_text(12))
    monkeypatch.setattr(loader_module, "KEEP_CASES", 5)  # the first five kept, the rest read again
    plan = plan_paths([f], repo)
    assert len(plan.kept) == 5
    every = load_eval_file(f, repo).cases
    picked = plan.refs[3:9]
    again = list(plan.read_cases(picked))
    assert [c.model_dump() for c in again] == [c.model_dump() for c in every[3:9]]
    assert not plan.vanished


@pytest.mark.parametrize("change", ["rewrite", "delete"])
def test_a_file_changed_before_its_turn_changes_nothing_in_the_run(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    change: str) -> None:
    """The cases are built again from the file as the plan read it: a run runs what it checked
    (reading the file again made "case vanished" error rows, or ran cases never checked)."""
    f = write(repo / "evals/s.eval.yaml", suite_text(4))
    monkeypatch.setattr(loader_module, "KEEP_CASES", 0)
    plan = plan_paths([f], repo)
    if change == "rewrite":
        f.write_text(suite_text(4).replace("case-00002", "renamed").replace("names Paris", "names Rome"))
    else:
        f.unlink()
    again = list(plan.read_cases(plan.refs))
    assert [c.id for c in again] == ["case-00000", "case-00001", "case-00002", "case-00003"]
    assert all(c.expected_outcome.startswith("names Paris") for c in again)
    assert not plan.vanished


def test_run_runs_the_cases_it_checked_when_a_suite_changes_mid_run(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first case's target rewrites the second suite before the run reaches it: the run still
    runs that suite's cases as it read them at the start (with one worker it reads two cases ahead)."""
    write(repo / "evals/a.eval.yaml", suite_text(3))
    b = write(repo / "evals/b.eval.yaml", suite_text(2))
    write(repo / "rewrite.py", f"""
        import pathlib
        path = pathlib.Path({str(b)!r})
        path.write_text(path.read_text().replace("id: case-0000", "id: moved-"))
        print("Paris")
        """)
    write(repo / ".agentv/targets.yaml", f"""
        targets:
          - name: default
            provider: cli
            command_template: "{sys.executable} {repo / 'rewrite.py'} {{PROMPT}}"
        """)
    monkeypatch.setattr(loader_module, "KEEP_CASES", 0)
    monkeypatch.chdir(repo)
    code = main(["run", "evals", "--workers", "1", "--quiet", "--output-dir", "out"])
    results, _ = read_results([repo / "out/results.jsonl"])
    assert "moved-" in b.read_text()  # the target did rewrite it
    assert code == 0
    assert sorted((r.suite, r.eval_id, r.verdict) for r in results) == [
        ("evals/a.eval.yaml", "case-00000", "pass"), ("evals/a.eval.yaml", "case-00001", "pass"),
        ("evals/a.eval.yaml", "case-00002", "pass"),
        ("evals/b.eval.yaml", "case-00000", "pass"), ("evals/b.eval.yaml", "case-00001", "pass")]


def test_a_case_whose_judge_script_went_mid_run_is_an_error_row_saying_so(repo: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The eval files are read once, but a case built again reads its judge's files again: the first
    suite's target deletes the second suite's judge script. The second suite's cases were built without
    their code judge and passed on the default LLM judge; they are error rows naming what happened."""
    write(repo / "evals/a.eval.yaml", suite_text(3))
    write(repo / "evals/b.eval.yaml", """
        tests:
          - {id: judged-1, criteria: c, input: q, assert: [{name: j, type: code_judge, command: [python3, judge.py]}]}
          - {id: judged-2, criteria: c, input: q, assert: [{name: j, type: code_judge, command: [python3, judge.py]}]}
        """)
    judge = write(repo / "evals/judge.py", "print('{\"score\": 1}')\n")
    write(repo / "agent.py", f"import pathlib\npathlib.Path({str(judge)!r}).unlink(missing_ok=True)\nprint('Paris')\n")
    write(repo / ".agentv/targets.yaml", f"""
        targets:
          - name: default
            provider: cli
            command_template: "{sys.executable} {repo / 'agent.py'} {{PROMPT}}"
            judge_target: judge
          - name: judge
            provider: mock
            response: '{{"score": 1, "hits": ["fine"], "misses": [], "reasoning": "fine"}}'
        """)
    monkeypatch.setattr(loader_module, "KEEP_CASES", 0)
    monkeypatch.chdir(repo)
    code = main(["run", "evals", "--workers", "1", "--quiet", "--output-dir", "out"])
    results, _ = read_results([repo / "out/results.jsonl"])
    assert code == 1
    rows = {r.eval_id: r for r in results if r.suite == "evals/b.eval.yaml"}
    assert sorted(rows) == ["judged-1", "judged-2"] and {r.verdict for r in rows.values()} == {"error"}
    assert rows["judged-1"].error == (
        "case 'judged-1' at evals/b.eval.yaml:2 could not be built again when the run reached it (a file "
        "it reads, such as a judge's script or prompt, changed or went during the run); run again")


def peak_bytes_to_plan_and_read(repo: Path, n: int) -> int:
    f = write(repo / f"evals/n{n}.eval.yaml", suite_text(n))
    tracemalloc.start()
    try:
        plan = plan_paths([f], repo)
        for _ in plan.read_cases(plan.refs):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_to_load_a_suite_does_not_grow_with_its_cases(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the kept cases, a case costs its ref and its text, not its parsed tree (about 14 KB
    a case when the suite was composed as one document)."""
    monkeypatch.setattr(loader_module, "KEEP_CASES", 50)
    small = peak_bytes_to_plan_and_read(repo, 100)
    large = peak_bytes_to_plan_and_read(repo, 1100)
    per_case = (large - small) / 1000
    # ~1.2 KB today (the ref grew a field for depends_on); a parsed tree kept per case would be ~14 KB
    assert per_case < 1500, f"{per_case:.0f} bytes a case"


def test_memory_to_plan_a_case_with_one_long_string_stays_a_few_copies_of_it(repo: Path) -> None:
    """One 4 MB string: the text, the parser's copy and the built case hold it (3.5 copies at the
    peak); the case's digest once escaped it into JSON, copied that and encoded it (7 copies:
    a 50 MB input made validate peak at 437 MB instead of 250, see bench/validate_bench.py)."""
    size = 4 * 1024 * 1024
    f = write(repo / "evals/big.eval.yaml", 'tests:\n  - id: big\n    input: "' + "x" * size
              + '"\n    assertions:\n      - {type: contains, value: x}\n')
    tracemalloc.start()
    try:
        plan = plan_paths([f], repo)
        for _ in plan.read_cases(plan.refs):
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4.5 * size, f"peak {peak / size:.1f} times the string"


def test_an_internal_error_mid_run_still_writes_the_reports(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """However the run breaks off, the cases that finished are in the JUnit and the summary says
    the run was cut short; the exit code is the internal error's (4), never a pass."""
    write(repo / "evals/s.eval.yaml", suite_text(4))
    write(repo / ".agentv/targets.yaml", "targets:\n  - name: default\n    provider: mock\n    response: Paris\n")
    real = loader_module.SuitePlan.read_cases

    def breaks_after_two(self: loader_module.SuitePlan, refs: Any) -> Any:
        for number, case in enumerate(real(self, refs)):
            if number == 2:
                raise RuntimeError("a bug in reading cases")
            yield case

    monkeypatch.setattr(loader_module.SuitePlan, "read_cases", breaks_after_two)
    monkeypatch.chdir(repo)
    try:
        code = main(["run", "evals", "--workers", "1", "--quiet", "--output-dir", "out"])
    finally:
        allow_new_scripts()  # the broken run refused new judges, as it must; later tests in this process need them
    err = capsys.readouterr().err
    assert code == EXIT_INTERNAL and "internal error: RuntimeError: a bug in reading cases" in err
    assert re.search(r"stopped by an internal error; writing \d finished case\(s\) of 4", err), err
    rows, _ = read_results([repo / "out/results.jsonl"])
    finished = [r for r in rows if r.failure_reason_code is None]
    assert len(rows) == 4 and all(r.error == "not run: the run stopped on an internal error" for r in rows[len(finished):])
    junit = (repo / "out/junit.xml").read_text()
    assert 1 <= len(finished) < 4 and junit.count("<testcase") == 4  # the cases not finished are errors there
    assert all(f'name="{r.eval_id}"' in junit for r in finished)
    assert junit.count("not run: the run stopped on an internal error") == 2 * (4 - len(finished))  # message and body


def test_a_long_text_counts_in_the_case_digest_by_its_hash(tmp_path: Path) -> None:
    """A case's digest (what a rerun compares) changes with any character of a long input, which
    enters it hashed a slice at a time rather than escaped into one JSON text (see bench/validate_bench.py)."""
    from agentv_gate.loader.plan import LONG_TEXT, case_digest
    from agentv_gate.loader.suite import iter_eval_file

    def digest(text: str) -> str:
        (tmp_path / ".git").mkdir(exist_ok=True)
        path = tmp_path / "a.eval.yaml"
        path.write_text(f'tests:\n  - id: big\n    input: "{text}"\n    assertions:\n      - {{type: contains, value: x}}\n')
        [(_, case)] = list(iter_eval_file(path, [], tmp_path, False))
        return case_digest(case)

    long = "a" * (3 * LONG_TEXT)
    assert digest(long) == digest(long)
    assert digest(long) != digest(long[:LONG_TEXT] + "b" + long[LONG_TEXT + 1:])
    assert digest("short") != digest("shorts")


def test_planning_pauses_the_cycle_collector_and_leaves_it_as_it_was(repo: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector's passes over a long suite's growing heap were a twelfth of planning it: paused while
    the suites are read, it is running again after (or still off, for a program that turned it off)."""
    write(repo / "evals/s.eval.yaml", "tests:\n  - {id: a, input: q, assert: [{type: contains, value: x}]}\n")
    seen: list[bool] = []
    real = loader_module.iter_eval_file

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(loader_module, "iter_eval_file", watched)
    assert gc.isenabled()
    assert [ref.id for ref in plan_paths([repo / "evals"], repo).refs] == ["a"]
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        plan_paths([repo / "evals"], repo)
        assert not gc.isenabled()
    finally:
        gc.enable()
    monkeypatch.setattr(loader_module, "iter_eval_file", lambda *args, **kwargs: iter([(0, 1)]))  # breaks it
    with pytest.raises(AttributeError):
        plan_paths([repo / "evals"], repo)
    assert gc.isenabled()


def test_a_later_plan_in_the_same_process_sees_the_template_as_it_is_then(tmp_path: Path) -> None:
    """A workspace template counts in its cases' digest by its files; its hash is made once a plan, so a
    second plan in one process (a library caller, a long-lived tool) is not handed the first one's."""
    (tmp_path / ".git").mkdir()
    write(tmp_path / "evals/template/README.md", "the project\n")
    write(tmp_path / "evals/w.eval.yaml", """
        workspace:
          template: ./template
        tests:
          - {id: one, input: q, assertions: [{type: contains, value: x}]}
    """)

    def digest() -> str:
        [ref] = plan_paths([tmp_path / "evals"], tmp_path).refs
        return ref.digest

    first = digest()
    assert digest() == first
    write(tmp_path / "evals/template/README.md", "the project, changed\n")
    assert digest() != first
