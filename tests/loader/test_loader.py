"""The loader accepts every generation of AgentV's eval format and locates every problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_gate.loader import discover_eval_files, load_eval_file, plan_paths
from agentv_gate.models import CodeJudgeConfig, ContainsConfig, LlmJudgeConfig
from tests.helpers.files import write


def messages_of(problems) -> list[str]:
    return [f"{p.line}: {p.message}" for p in problems]


def test_gen2_evalcases_with_input_messages_and_execution_evaluators(repo: Path) -> None:
    write(repo / "evals/judge.py", "print('{}')\n")
    f = write(repo / "evals/g2.eval.yaml", """
        description: gen2 suite
        evalcases:
          - id: capital
            expected_outcome: Names Paris
            input_messages:
              - role: system
                content: Answer in one sentence.
              - role: user
                content: What is the capital of France?
            expected_messages:
              - role: assistant
                content: Paris is the capital of France.
            execution:
              evaluators:
                - name: kw
                  type: code_judge
                  script: python3 judge.py
                  keywords: [Paris]
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    [case] = result.cases
    assert case.id == "capital"
    assert case.question == "Answer in one sentence. What is the capital of France?"
    assert case.expected_outcome == "Names Paris"
    assert case.reference_answer == "Paris is the capital of France."
    assert case.source_line == 3
    assert case.suite == "evals/g2.eval.yaml"
    [judge] = case.evaluators
    assert isinstance(judge, CodeJudgeConfig)
    assert judge.resolved_script == ["python3", str((repo / "evals/judge.py").resolve())]


def test_gen3_tests_criteria_input_string_and_suite_assertions_appended(repo: Path) -> None:
    f = write(repo / "evals/g3.eval.yaml", """
        tests:
          - id: a
            criteria: says hi
            input: Say hi
            expected_output: hi
            assert:
              - type: contains
                value: hi
          - id: b
            criteria: says bye
            input: Say bye
            execution:
              skip_defaults: true
        assert:
          - type: is-json
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    a, b = result.cases
    assert [e.type for e in a.evaluators] == ["contains", "is_json"]
    assert isinstance(a.evaluators[0], ContainsConfig) and a.evaluators[0].value == "hi"
    assert a.input_messages[0].role == "user" and a.question == "Say hi"
    assert a.reference_answer == "hi"
    assert b.evaluators == []


def test_gen2_suite_evaluators_only_fill_cases_without_their_own(repo: Path) -> None:
    f = write(repo / "evals/s.yaml", """
        execution:
          evaluators:
            - name: suite-default
              type: contains
              value: x
        evalcases:
          - id: own
            expected_outcome: o
            input_messages: [{role: user, content: q}]
            evaluators:
              - name: own
                type: equals
                value: y
          - id: inherits
            expected_outcome: o
            input_messages: [{role: user, content: q}]
    """)
    own, inherits = load_eval_file(f, repo).cases
    assert [e.name for e in own.evaluators] == ["own"]
    assert [e.name for e in inherits.evaluators] == ["suite-default"]


def test_legacy_aliases_question_outcome_and_grader_warning(repo: Path) -> None:
    f = write(repo / "evals/old.yaml", """
        eval_cases:
          - id: old
            question: What is 2+2?
            outcome: says 4
            grader: llm_judge
    """)
    result = load_eval_file(f, repo)
    [case] = result.cases
    assert case.question == "What is 2+2?"
    assert case.expected_outcome == "says 4"
    assert isinstance(case.evaluators[0], LlmJudgeConfig)
    assert [(w.line, w.message) for w in result.warnings] == [(5, "'grader' is deprecated")]


def test_reference_answer_is_last_expected_message_and_objects_become_json(repo: Path) -> None:
    f = write(repo / "evals/r.yaml", """
        tests:
          - id: multi
            criteria: c
            input: q
            expected_output:
              - role: assistant
                content: first
              - role: assistant
                content: {total: 3}
    """)
    [case] = load_eval_file(f, repo).cases
    assert json.loads(case.reference_answer) == {"total": 3}


def test_file_segments_resolved_from_eval_folder_then_repo_root(repo: Path) -> None:
    write(repo / "evals/local.txt", "local text\r\n")
    write(repo / "shared/doc.md", "from the root")
    write(repo / "shared/style.instructions.md", "be nice")
    write(repo / ".agentv/config.yaml", "guideline_patterns: ['**/*.instructions.md']\n")
    f = write(repo / "evals/files.yaml", """
        tests:
          - id: f
            criteria: c
            input:
              - role: user
                content:
                  - type: file
                    value: local.txt
                  - type: file
                    value: /shared/doc.md
                  - type: file
                    value: shared/style.instructions.md
                  - type: text
                    value: Summarise.
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    [case] = result.cases
    segs = case.input_messages[0].content
    # `value` stays as written (judges read it); what the loader found is added beside it.
    assert segs[0] == {"type": "file", "value": "local.txt", "path": "evals/local.txt", "text": "local text\n",
                       "resolved_path": str((repo / "evals/local.txt").resolve())}
    assert segs[1]["text"] == "from the root"
    assert case.question == "Summarise."  # file contents are not part of the question text
    assert case.guideline_files == [str((repo / "shared/style.instructions.md").resolve())]
    assert len(case.input_files) == 2
    assert '<file path="shared/doc.md">\nfrom the root\n</file>' in case.input_messages[0].text()


def test_jsonl_with_sidecar_yaml_and_line_numbers(repo: Path) -> None:
    write(repo / "evals/set.yaml", """
        description: sidecar
        execution:
          evaluators:
            - name: has-ok
              type: contains
              value: ok
    """)
    rows = [
        {"id": "one", "criteria": "c", "input": "first"},
        {"id": "two", "criteria": "c", "input": "second", "assert": [{"type": "equals", "value": "x"}]},
    ]
    (repo / "evals/set.jsonl").write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n")
    files, _ = discover_eval_files([repo / "evals"])
    assert [p.name for p in files] == ["set.jsonl"]  # the sidecar is not a suite of its own
    result = load_eval_file(repo / "evals/set.jsonl", repo)
    one, two = result.cases
    assert (one.source_line, two.source_line) == (1, 3)
    assert [e.name for e in one.evaluators] == ["has-ok"]
    assert [e.type for e in two.evaluators] == ["equals", "contains"]


def test_a_sidecar_s_problems_are_located_in_the_sidecar_and_its_case_list_is_refused(repo: Path) -> None:
    """A JSONL suite's cases are its lines: a `tests:` list in its sidecar (read by no one, AgentV
    included) is refused, and every problem of the sidecar points at the sidecar, not the JSONL file."""
    write(repo / "evals/set.yaml", """
        description: sidecar
        treshold: 0.9
        tests:
          - id: never-run
            input: q
            assert: [{type: contains, value: London}]
    """)
    (repo / "evals/set.jsonl").write_text(json.dumps({"id": "one", "criteria": "c", "input": "q"}) + "\n")
    result = load_eval_file(repo / "evals/set.jsonl", repo)
    assert [(p.file.name, p.line, p.message) for p in result.errors] == [
        ("set.yaml", 3, "'tests' in the sidecar of set.jsonl is never read: a JSONL suite's cases are its lines"),
        ("set.yaml", 2, "unknown key 'treshold' in the suite (did you mean 'threshold'?)"),
    ]
    assert [c.id for c in result.cases] == ["one"]


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        ("      - name: x\n        type: nonsense\n", 8, "unknown evaluator type 'nonsense'"),  # at `type:`
        ("      - type: contains\n        value: a\n", 7, "contains evaluator is missing 'name'"),
        ("      - name: nameless-type\n", 7, "evaluator is missing 'type'"),
        ("      - name: j\n        type: code_judge\n", 7, "code_judge 'j' has no 'script'"),
        ("      - name: j\n        type: code_judge\n        script: python3 missing.py\n", 9,  # at `script:`
         "script file 'missing.py' not found"),
        ("      - name: j\n        type: llm_judge\n        prompt: ./nope.md\n", 9, "prompt file './nope.md' not found"),
    ],
)
def test_evaluator_problems_are_located(repo: Path, body: str, line: int, fragment: str) -> None:
    f = repo / "evals/bad.yaml"
    f.write_text(
        "evalcases:\n  - id: c\n    expected_outcome: o\n    input_messages: [{role: user, content: q}]\n"
        "    execution:\n      evaluators:\n" + body
    )
    result = load_eval_file(f, repo)
    assert [p.line for p in result.errors] == [line]
    assert fragment in result.errors[0].message
    assert result.errors[0].expected
    assert len(result.cases) == 1  # the case itself still loads; only the broken evaluator is dropped


def test_duplicate_ids_missing_file_and_broken_case_do_not_hide_good_cases(repo: Path) -> None:
    f = write(repo / "evals/mixed.yaml", """
        tests:
          - id: good
            criteria: c
            input: q
          - id: good
            criteria: c
            input: q
          - id: needs-file
            criteria: c
            input:
              - role: user
                content: [{type: file, value: absent.md}]
          - just a string
          - id: last
            criteria: c
            input: q
    """)
    result = load_eval_file(f, repo)
    assert [c.id for c in result.cases] == ["good", "last"]
    found = messages_of(result.errors)
    assert found[0] == "5: duplicate case id 'good' (first at line 2)"
    assert found[1].startswith("12: referenced file 'absent.md' not found")
    assert found[2] == "13: case #4 must be a mapping, got text"


def test_malformed_yaml_and_duplicate_keys_are_located(repo: Path) -> None:
    f = write(repo / "evals/broken.yaml", "tests:\n  - id: a\n    input: [unclosed\n    criteria: x\n")
    [problem] = load_eval_file(f, repo).errors
    assert problem.message.startswith("malformed YAML")
    assert problem.line == 4
    g = write(repo / "evals/dupkey.yaml", "tests:\n  - id: a\n    input: q\n    input: r\n")
    [problem] = load_eval_file(g, repo).errors
    assert (problem.line, problem.message) == (4, "duplicate key 'input' (first at line 3)")


def test_references_outside_repo_root_are_refused_unless_allowed(repo: Path, tmp_path: Path) -> None:
    write(tmp_path / "secret.txt", "outside")
    f = write(repo / "evals/esc.yaml", """
        tests:
          - id: esc
            criteria: c
            input:
              - role: user
                content: [{type: file, value: ../../secret.txt}]
    """)
    [problem] = load_eval_file(f, repo).errors
    assert "outside the repository root" in problem.message
    allowed = load_eval_file(f, repo, allow_outside_root=True)
    assert allowed.errors == [] and allowed.cases[0].input_messages[0].content[0]["text"] == "outside"


def test_threshold_from_suite_and_case(repo: Path) -> None:
    f = write(repo / "evals/t.yaml", """
        threshold: 0.7
        tests:
          - id: suite
            criteria: c
            input: q
          - id: own
            criteria: c
            input: q
            execution:
              threshold: 0.9
          - id: bad
            criteria: c
            input: q
            threshold: 7
    """)
    result = load_eval_file(f, repo)
    assert [(c.id, c.threshold) for c in result.cases] == [("suite", 0.7), ("own", 0.9)]
    assert "threshold 7 is not a number in 0..1" in result.errors[0].message


def test_folder_discovery_ignores_non_eval_yaml(repo: Path) -> None:
    write(repo / "evals/a.yaml", "tests: []\n")
    write(repo / "evals/sub/b.eval.yaml", "tests: []\n")
    write(repo / ".github/workflows/ci.yaml", "on: push\n")
    write(repo / "config/settings.yaml", "x: 1\n")
    write(repo / "other/c.eval.yaml", "tests: []\n")
    files, problems = discover_eval_files([repo])
    rel = sorted(str(p.relative_to(repo)) for p in files)
    assert rel == ["evals/a.yaml", "evals/sub/b.eval.yaml", "other/c.eval.yaml"]
    assert problems == []
    assert plan_paths([repo / "missing"]).problems[0].message == "no such file or folder"


def test_references_also_resolve_from_parent_folders_up_to_the_root(repo: Path) -> None:
    write(repo / "suites/shared.md", "shared between sub-suites")
    f = write(repo / "suites/team/deep/x.eval.yaml", """
        tests:
          - id: p
            criteria: c
            input:
              - role: user
                content: [{type: file, value: shared.md}]
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    assert result.cases[0].input_messages[0].content[0]["text"] == "shared between sub-suites"


def test_a_missing_input_file_is_reported_at_the_line_that_lists_it(repo: Path) -> None:
    write(repo / "evals/present.md", "here\n")
    f = write(repo / "evals/files.eval.yaml", """
        input_files: [present.md]
        tests:
          - id: own-list
            criteria: c
            input: q
            input_files:
              - present.md
              - absent.md
          - id: suite-list
            criteria: c
            input: q
        """)
    result = load_eval_file(f, repo)
    assert [c.id for c in result.cases] == ["suite-list"]
    [problem] = result.errors
    assert problem.line == 8 and "absent.md" in problem.message and "not found" in problem.message


@pytest.mark.parametrize(("sidecar", "line", "key"), [
    ("description: d\nassert:\n  - {type: contains, value: ok}\n", 2, "assert"),
    ("assertions:\n  - {type: contains, value: ok}\n", 1, "assertions"),
    ("evaluators:\n  - {name: e, type: contains, value: ok}\n", 1, "evaluators"),
    ("input: Answer in French.\n", 1, "input"),
    ("input_files: [doc.md]\n", 1, "input_files"),
])
def test_a_jsonl_sidecar_key_agentv_does_not_read_is_refused(repo: Path, sidecar: str, line: int, key: str) -> None:
    """AgentV 2.19's JSONL loader reads only name, description, execution and evaluator from the sidecar:
    suite assertions or input written beside them reach none of its cases there, so a case scored with
    them here is scored as AgentV never scores it. Each is refused at its line in the sidecar."""
    write(repo / "evals/set.yaml", sidecar)
    (repo / "evals/set.jsonl").write_text(json.dumps({"id": "one", "criteria": "c", "input": "q"}) + "\n")
    result = load_eval_file(repo / "evals/set.jsonl", repo)
    assert [(p.file.name, p.line) for p in result.errors] == [("set.yaml", line)]
    assert result.errors[0].message.startswith(
        f"'{key}' in the sidecar of set.jsonl is never read by AgentV 2.19, which reads only name, description, "
        "execution and evaluator from a JSONL sidecar")


def test_a_jsonl_case_with_its_own_execution_does_not_silently_keep_the_sidecar_s_evaluators(repo: Path) -> None:
    """AgentV merges a JSONL case's `execution` with the sidecar's as `case ?? sidecar`: a case that writes
    `execution` (for trials, say) gets none of the sidecar's `execution.evaluators`. Keeping them here scored
    that case on checks AgentV never runs for it; it is refused at the case's `execution`."""
    write(repo / "evals/set.yaml", "execution:\n  evaluators:\n    - {name: has-ok, type: contains, value: ok}\n")
    rows = [{"id": "one", "criteria": "c", "input": "q"},
            {"id": "two", "criteria": "c", "input": "q", "execution": {"trials": {"count": 2}}}]
    (repo / "evals/set.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = load_eval_file(repo / "evals/set.jsonl", repo)
    assert [(p.file.name, p.line) for p in result.errors] == [("set.jsonl", 2)]
    assert result.errors[0].message == (
        "case 'two' has its own 'execution', which in AgentV 2.19 replaces the sidecar's whole 'execution': "
        "the sidecar's evaluators (set.yaml:2) would not apply to it")
    assert [c.id for c in result.cases] == ["one"]


def test_a_jsonl_comment_line_or_file_reference_line_is_refused_at_its_line(repo: Path) -> None:
    """AgentV's JSONL loader `JSON.parse`s every non-blank line and wants an object: a `//` line (a comment,
    or a case commented out) or a `"file://..."` line makes it refuse the file. They were skipped, or
    followed as a YAML list's `file://` entry is, here."""
    write(repo / "evals/more.yaml", "- id: other\n  criteria: c\n  input: q\n")
    (repo / "evals/set.jsonl").write_text(
        json.dumps({"id": "one", "criteria": "c", "input": "q"}) + "\n"
        + '// {"id": "two", "criteria": "c", "input": "q"}\n'
        + json.dumps("file://more.yaml") + "\n")
    result = load_eval_file(repo / "evals/set.jsonl", repo)
    assert [(p.line, p.message) for p in result.errors] == [
        (2, "a '//' comment line: JSONL has no comments, and AgentV 2.19 refuses the file"),
        (3, "case #3 must be a mapping, got text"),
    ]
    assert [c.id for c in result.cases] == ["one"]


@pytest.mark.parametrize("name", ["set.yml", "set.eval.yaml"])
def test_a_sidecar_agentv_never_reads_is_refused(repo: Path, name: str) -> None:
    """AgentV's JSONL loader reads the settings of `set.jsonl` from `set.yaml` only: evaluators in `set.yml`
    (or `set.eval.yaml`) reach none of its cases there, so they are not read as its settings here either."""
    write(repo / f"evals/{name}", "execution:\n  evaluators:\n    - {name: has-ok, type: contains, value: ok}\n")
    (repo / "evals/set.jsonl").write_text(json.dumps({"id": "one", "criteria": "c", "input": "q"}) + "\n")
    result = load_eval_file(repo / "evals/set.jsonl", repo)
    assert [(p.file.name, p.line, p.message) for p in result.errors] == [
        (name, 1, f"{name} is not read as the sidecar of set.jsonl: AgentV 2.19 reads a JSONL suite's settings "
                  "from set.yaml only")]
    assert [e.name for e in result.cases[0].evaluators] == []


def test_looked_in_paths_are_repository_relative_inside_it(tmp_path: Path) -> None:
    """A missing file is named as the reader finds it in the repository, not by the runner's absolute path;
    a place outside the repository stays absolute (it cannot be written relative to the root)."""
    from tests.helpers.cli import run_cli
    from tests.helpers.files import make_repo

    repo = make_repo(tmp_path / "repo", "targets:\n  - name: default\n    provider: mock\n    response: ok\n")
    outside = tmp_path / "elsewhere" / "judge.py"
    write(repo / "evals" / "support" / "s.eval.yaml",
          "tests:\n  - id: a\n    input: hi\n    criteria: says hi\n    assert:\n"
          "      - {name: j, type: code_judge, script: [python3, judges/missing.py]}\n"
          f"      - {{name: k, type: code_judge, script: [python3, {outside}]}}\n")
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # validate: 1 for problems found
    out = proc.stdout + proc.stderr
    assert ("'judges/missing.py' not found (looked in: evals/support/judges/missing.py, evals/judges/missing.py, "
            "judges/missing.py)") in out
    assert f", {outside}) (expected an existing file)" in out  # outside the repository: absolute
    assert str(repo) not in out
