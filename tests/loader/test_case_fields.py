"""One case's fields as the loader builds them: message roles and shapes, the reference answer,
ids, thresholds, conversation ids, targets, metadata, and where each broken one is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_gate.loader import iter_eval_file, load_eval_file
from tests.helpers.files import write


def errors_of(result) -> list[tuple[int, str]]:
    return [(p.line, p.message) for p in result.errors]


def test_message_shapes_roles_and_reference_answers(repo: Path) -> None:
    f = write(repo / "evals/shapes.eval.yaml", """
        tests:
          - id: text-expected
            input: q
            expected_output: done
          - id: typed-word
            criteria: c
            input: [{role: user, content: what type is it}]
            expected_output: {total: 3, due: 2024-01-31}
          - id: other-segment
            criteria: c
            input:
              - role: user
                content: [{type: audio, value: clip.wav}, {type: text, value: listen}]
          - id: tool-calls
            criteria: c
            input: q
            expected_output:
              - role: assistant
                tool_calls: [{tool: search, input: {q: x, since: 2024-01-01}}]
            metadata: {team: billing}
          - id: dated-input
            criteria: c
            input: {when: 2024-01-31}
          - id: legacy-question
            criteria: c
            question: What is 2+2?
            expected_output: [{role: assistant, content: ""}]
          - id: text-parts
            criteria: c
            input: q
            expected_output: [plays a role, well]
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    text, typed, other, tools, dated, legacy, parts = result.cases
    assert [(m.role, m.content) for m in text.expected_messages] == [("assistant", "done")]
    assert text.reference_answer == "done"
    assert typed.input_messages[0].content == "what type is it"
    # A YAML date in an expected object is text in its JSON (it crashed the loader before).
    assert typed.reference_answer == json.dumps({"total": 3, "due": "2024-01-31"}, indent=2)
    # A segment type the loader does not read passes through as written.
    assert other.input_messages[0].content == [{"type": "audio", "value": "clip.wav"}, {"type": "text", "value": "listen"}]
    assert other.input_files == []
    # `content` left out: the reference answer is the tool calls (it was empty before).
    assert tools.reference_answer == json.dumps([{"tool": "search", "input": {"q": "x", "since": "2024-01-01"}}],
                                                indent=2)
    assert tools.metadata == {"team": "billing"} and text.metadata is None
    assert dated.question == json.dumps({"when": "2024-01-31"}, indent=2)
    assert [(m.role, m.content) for m in legacy.input_messages] == [("user", "What is 2+2?")]
    assert legacy.reference_answer == ""  # empty, not the JSON of missing tool calls
    # A list without a role first (whatever its text says) is the parts of one expected message.
    assert [(m.role, m.content) for m in parts.expected_messages] == [("assistant", ["plays a role", "well"])]
    # AgentV's reference of a content list is JSON.stringify of its mapping segments: the strings are dropped.
    assert parts.reference_answer == "[]"


def test_input_messages_shorthands_are_the_user_s_messages(repo: Path) -> None:
    """gen2's `input_messages` reads as `input` does: a string is a user message (not an expected answer's
    assistant message); a string in the list (AgentV drops it) and a list entry without a role are refused."""
    f = write(repo / "evals/g2.eval.yaml", """
        evalcases:
          - id: text
            expected_outcome: c
            input_messages: hello
          - id: list
            expected_outcome: c
            input_messages: [hello, {role: user, content: again}]
          - id: segments
            expected_outcome: c
            input_messages: [{type: text, value: hi}]
    """)
    result = load_eval_file(f, repo)
    [text] = result.cases
    assert [(m.role, m.content) for m in text.input_messages] == [("user", "hello")]
    assert errors_of(result) == [(7, "a text entry in the 'input_messages' list is not a message: AgentV 2.19 drops it"),
                                 (10, "each entry of 'input_messages' must be a message with a 'role'")]


def test_a_message_agentv_drops_from_its_list_is_refused_at_its_line(repo: Path) -> None:
    """AgentV keeps only the entries of a message list that pass `isTestMessage` (a role among system, user,
    assistant, tool; text, segment mappings or a mapping as content, or tool calls): the others are dropped,
    so the agent is asked something else, or the test is skipped when none is left. Sending them here
    scored an answer to another question; each is refused at its own line."""
    f = write(repo / "evals/dropped.eval.yaml", """
        tests:
          - id: strings
            criteria: c
            input: [first, second]
          - id: expected-string
            criteria: c
            input: q
            expected_output:
              - {role: assistant, content: one}
              - two
          - id: robot
            criteria: c
            input:
              - {role: user, content: hi}
              - {role: robot, content: beep}
          - id: number
            criteria: c
            input: [{role: user, content: 5}]
          - id: missing
            criteria: c
            input: [{role: user, contnet: hi}]
          - id: text-in-segments
            criteria: c
            input: [{role: user, content: [hello, {type: text, value: x}]}]
          - id: kept
            criteria: c
            input: [{role: system, content: {style: terse}}, {role: user, content: [{type: text, value: x}]}]
            expected_output: [{role: assistant, tool_calls: [{tool: search}]}]
          - id: number-input
            criteria: c
            input: 7
          - id: number-expected
            criteria: c
            input: q
            expected_output: 4.2
    """)
    result = load_eval_file(f, repo)
    assert [c.id for c in result.cases] == ["kept"]
    assert [(line, message.split(":")[0]) for line, message in errors_of(result)] == [
        (4, "a text entry in the 'input' list is not a message"),
        (10, "a text entry in the 'expected_output' list is not a message"),
        (15, "role 'robot' in 'input' is not one of system, user, assistant, tool"),
        (18, "a message in 'input' with content that is a number"),
        (21, "a message in 'input' with no content"),
        (24, "a message in 'input' with a content list holding something other than mappings"),
        (31, "'input' is a number"),
        (35, "'expected_output' is a number"),
    ]


def test_suite_input_targets_thresholds_and_conversation_ids(repo: Path) -> None:
    f = write(repo / "evals/fields.eval.yaml", """
        description: fields
        target: suite-target
        input: [{role: system, content: be brief}]
        tests:
          - id: inherits
            criteria: c
            input: q
            threshold: 1
            conversation_id: thread-1
          - id: own-target
            criteria: c
            input: q
            execution: {target: other, threshold: 0, skip_defaults: true}
            conversation_id: 7
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    inherits, own = result.cases
    assert (inherits.target, inherits.target_line, inherits.threshold, inherits.conversation_id) == (
        "suite-target", 2, 1.0, "thread-1")
    assert (own.target, own.target_line, own.threshold, own.conversation_id) == ("other", 13, 0.0, "7")
    # The suite's input comes first; `skip_defaults` leaves it out.
    assert [(m.role, m.content) for m in inherits.input_messages] == [("system", "be brief"), ("user", "q")]
    assert [(m.role, m.content) for m in own.input_messages] == [("user", "q")]


def test_broken_case_fields_are_located(repo: Path) -> None:
    f = write(repo / "evals/broken.eval.yaml", """
        tests:
          - id: bad-key
            criteria: c
            input:
              - role: user
                content: hi
                1: x
                2: y
          - criteria: c
            input: q
            bogus_key: 1
          - id: empty
            input: []
            criteria: c
          - id: float-thread
            criteria: c
            input: q
            conversation_id: 1.5
          - id: bool-thread
            criteria: c
            input: q
            conversation_id: true
          - id: high
            criteria: c
            input: q
            threshold: 1.5
          - id: ws
            criteria: c
            input: q
            workspace:
              hooks:
                before_all: {command: [python3, setup.py]}
          - id: nothing
            input: q
          - id: listed-criteria
            input: q
            criteria: [a, b]
          - id: object-reference
            criteria: c
            input: q
            reference_answer: {x: 1}
          - id: negative
            criteria: c
            input: q
            threshold: -0.5
          - id: blank-role
            criteria: c
            input: [{role: " ", content: x}]
          - id: number-role
            criteria: c
            input: [{role: 5, content: x}]
          - id: ""
            criteria: c
            input: q
          - id: "  "
            criteria: c
            input: q
          - id: yes-threshold
            criteria: c
            input: q
            threshold: true
          - id: only-expected
            input: q
            expected_output: a
          - id: only-assert
            input: q
            assert: [{type: contains, value: a}]
          - id: files-on-messages
            criteria: c
            input: [{role: user, content: q}]
            input_files: [nowhere.md]
          - id: no-files
            criteria: c
            input: q
            input_files: []
          - id: two-thresholds
            criteria: c
            input: q
            threshold: 0.5
            execution: {threshold: 0.9}
          - id: two-targets
            criteria: c
            input: q
            target: a
            execution:
              target: b
          - id: target-and-matrix
            criteria: c
            input: q
            execution:
              target: a
              targets: [b, c]
          - id: text-metadata
            criteria: c
            input: q
            metadata: priority high
          - id: blank-target
            criteria: c
            input: q
            execution: {target: " "}
          - id: text-skip-defaults
            criteria: c
            input: q
            execution:
              skip_defaults: "false"
          - id: misspelt-segments
            criteria: c
            input:
              - role: user
                content:
                  - {type: text, valeu: hi}
                  - {type: file, value: ctx.md, path: other.md}
                  - {type: text, value: hi, path: other.md}
          - id: number-metadata-key
            criteria: c
            input: q
            metadata: {1: a}
    """)
    write(repo / "evals/ctx.md", "context\n")
    result = load_eval_file(f, repo)
    assert errors_of(result) == [
        (5, "a message in 'input' is not valid: 1: Keys should be strings"),  # the first of its two problems
        (11, "unknown key 'bogus_key' in case #2"),
        (9, "case #2 has no 'id'"),
        (12, "case 'empty' has an empty input"),
        (18, "conversation_id 1.5 is not text"),
        (22, "conversation_id True is not text"),
        (26, "threshold 1.5 is not a number in 0..1"),
        (32, "'before_all' runs once per suite: write it in the suite's 'workspace'"),
        (33, "case 'nothing' has nothing to judge against"),
        (37, "'criteria' must be text, got a list"),
        (41, "'reference_answer' must be text"),
        (45, "threshold -0.5 is not a number in 0..1"),
        (48, "'role' in 'input' must be text, got ' '"),
        (51, "'role' in 'input' must be text, got 5"),
        (52, "case #14 has no 'id'"),
        (55, "case #15 has no 'id'"),
        (61, "threshold True is not a number in 0..1"),
        # AgentV attaches `input_files` to a text input only (it skips the test otherwise): never dropped
        (71, "'input_files' attaches files to a text 'input' only: test 'files-on-messages' writes its 'input' "
             "as a list"),
        (75, "'input_files' lists no file"),
        # one setting written twice: AgentV reads one, agentv-gate read the other
        (80, "'threshold' is written twice in test 'two-thresholds': here and at line 79; only one is read"),
        (86, "'target' is written twice in test 'two-targets': here and at line 84; only one is read"),
        (91, "'target' of test 'target-and-matrix' is never read: its 'execution.targets' (line 92) runs it "
             "on each of those targets"),
        # metadata reaches code judges and hooks as a mapping; AgentV drops any other value
        (96, "'metadata' must be a mapping, got text"),
        # an empty target (an unset ${{ VAR }}) is no target: never the default one instead
        (100, "'target' names no target (an unset ${{ VAR }}?)"),
        # AgentV skips the defaults only for `true`: the text "false" here dropped the suite's assertions
        (105, "'skip_defaults' must be true or false, got 'false'"),
        # a misspelt text segment's JSON went to the model as the prompt; a file segment's 'path' is never read by AgentV
        (111, "unknown key 'valeu' in a text segment (did you mean 'value'?)"),
        (112, "unknown key 'path' in a file segment: 'value' names its file"),
        (113, "unknown key 'path' in a text segment"),
        # a YAML key 1 is a number: it crashed the run (exit 4) where it must be a located problem
        (117, "'metadata' key 1 is a number, not text"),
    ]
    # Like an unknown key, a setting written twice is a problem of a case that still builds: the run stops.
    assert [c.id for c in result.cases] == ["only-expected", "only-assert", "two-thresholds", "two-targets",
                                            "target-and-matrix", "misspelt-segments"]


def test_suite_settings_written_twice_or_never_read_are_located(repo: Path) -> None:
    """A suite's `threshold`/`target` beside its `execution`'s (AgentV reads one, agentv-gate read the
    other), a `target` a matrix replaces, and `input_files` on a test whose input is a list of messages."""
    write(repo / "evals/ctx.md", "context\n")
    f = write(repo / "evals/suite.eval.yaml", """
        threshold: 0.5
        target: a
        input_files: [ctx.md]
        execution:
          threshold: 0.9
          target: b
          targets: [c, d]
        tests:
          - id: text
            criteria: c
            input: q
          - id: messages
            criteria: c
            input: [{role: user, content: q}]
    """)
    result = load_eval_file(f, repo)
    assert errors_of(result) == [
        (5, "'threshold' is written twice in the suite: here and at line 1; only one is read"),
        (6, "'target' is written twice in the suite: here and at line 2; only one is read"),
        (2, "'target' of the suite is never read: its 'execution.targets' (line 7) runs it on each of those targets"),
        (6, "'target' of the suite is never read: its 'execution.targets' (line 7) runs it on each of those targets"),
        (14, "the suite's 'input_files' (line 3) attaches files to a text 'input' only: test 'messages' writes "
             "its 'input' as a list"),
    ]
    assert [c.id for c in result.cases] == ["text"]


def test_a_suite_target_from_an_unset_variable_is_refused_not_the_default(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIT_AGENT_TARGET", raising=False)
    f = write(repo / "evals/env.eval.yaml", """
        target: ${{ AUDIT_AGENT_TARGET }}
        tests:
          - {id: a, criteria: c, input: q}
    """)
    result = load_eval_file(f, repo)
    assert errors_of(result) == [(1, "'target' names no target (an unset ${{ VAR }}?)")]


def test_gen2_evaluators_need_names_gen3_ones_are_named_for_them(repo: Path) -> None:
    """gen2's evaluator lists name each entry; gen3's `assert`/`assertions`/`evaluators` lists and
    a single `evaluator` (any generation) are named by their type and value."""
    gen2 = write(repo / "evals/g2.eval.yaml", """
        evalcases:
          - id: a
            expected_outcome: o
            input_messages: [{role: user, content: q}]
            evaluators: [{type: contains, value: x}]
    """)
    [problem] = load_eval_file(gen2, repo).errors
    assert problem.line == 5 and "contains evaluator is missing 'name'" in problem.message
    gen3 = write(repo / "evals/g3.eval.yaml", """
        tests:
          - id: a
            criteria: c
            input: q
            evaluators: [{type: contains, value: x}]
          - id: b
            criteria: c
            input: q
            assertions: [{type: contains, value: y}]
          - id: c
            criteria: c
            input: q
            evaluator: {type: equals, value: z}
    """)
    result = load_eval_file(gen3, repo)
    assert result.errors == []
    assert [[e.name for e in c.evaluators] for c in result.cases] == [["contains-x"], ["contains-y"], ["equals-z"]]


def test_jsonl_input_files_are_located_at_their_row(repo: Path) -> None:
    write(repo / "evals/present.md", "here\n")
    rows = [{"id": "ok", "criteria": "c", "input": "q", "input_files": ["present.md", "present.md"]},
            {"id": "missing", "criteria": "c", "input": "q", "input_files": ["present.md", "absent.md"]}]
    f = repo / "evals/files.jsonl"
    f.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = load_eval_file(f, repo)
    assert [c.id for c in result.cases] == ["ok"] and len(result.cases[0].input_files) == 2
    [problem] = result.errors
    assert problem.line == 2 and "absent.md" in problem.message and "not found" in problem.message


def test_a_test_s_own_target_leaves_the_suite_s_target_matrix(repo: Path) -> None:
    f = write(repo / "evals/matrix.eval.yaml", """
        execution:
          targets: [a, b]
        tests:
          - id: matrix
            criteria: c
            input: q
          - id: own
            criteria: c
            input: q
            target: c
          - id: own-in-execution
            criteria: c
            input: q
            execution: {target: d}
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    assert [(c.target, c.targets, c.target_line) for c in result.cases] == [
        (None, ["a", "b"], 2), ("c", None, 10), ("d", None, 14)]


def test_a_referenced_file_gone_after_it_was_found_is_a_located_problem(repo: Path) -> None:
    """Each reference is looked up once per suite; a file removed while the suite is being read (cases
    stream) is a problem located at the segment that names it, not a crash."""
    doc = write(repo / "evals/doc.md", "text\n")
    f = write(repo / "evals/gone.eval.yaml", """
        tests:
          - id: first
            criteria: c
            input: [{role: user, content: [{type: file, value: doc.md}]}]
          - id: second
            criteria: c
            input:
              - role: user
                content: [{type: file, value: doc.md}]
    """)
    problems: list = []
    cases = iter_eval_file(f, problems, repo)
    assert next(cases)[1].input_messages[0].content[0]["text"] == "text\n"
    doc.unlink()
    assert list(cases) == []
    assert [(p.line, p.message.split(":")[0]) for p in problems] == [(9, "referenced file 'doc.md' cannot be read")]


def test_suite_execution_settings_and_case_rubrics_reach_the_case(repo: Path) -> None:
    f = write(repo / "evals/settings.eval.yaml", """
        execution: {total_budget_usd: 5, fail_on_error: true, cache: false}
        tests:
          - id: a
            input: q
            rubrics:
              - {id: cites, outcome: cites a source}
              - {id: brief, outcome: is brief, required: false}
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    [case] = result.cases
    assert (case.suite_execution.total_budget_usd, case.suite_execution.fail_on_error,
            case.suite_execution.cache) == (5, True, False)
    [rubric] = case.evaluators
    assert rubric.name == "rubric"
    assert [(item.id, item.required) for item in rubric.rubrics] == [("cites", True), ("brief", False)]


def test_a_segment_whose_type_is_not_text_loads_without_a_crash(repo: Path) -> None:
    # found by the loader's property test: `type: []` in a content segment raised TypeError (exit 4)
    f = write(repo / "evals/odd.eval.yaml", """
        tests:
          - id: odd
            criteria: c
            input:
              - role: user
                content: [{type: [a]}, {type: {b: 1}}]
    """)
    result = load_eval_file(f, repo)
    assert [c.id for c in result.cases] == ["odd"]


def test_an_id_or_criteria_that_is_not_text_is_refused_at_its_line(repo: Path) -> None:
    """AgentV reads `id` and `criteria` with `asString`: `id: 123` is no id (the test is skipped) and
    `criteria: 42` or `true` no criteria (the judge grades against none). Here they ran as "123" and "42"."""
    f = write(repo / "evals/typed.eval.yaml", """
        tests:
          - id: 123
            criteria: c
            input: q
          - id: b
            criteria: 42
            input: q
          - eval_id: true
            criteria: c
            input: q
          - id: d
            expected_outcome: false
            input: q
          - id: e
            criteria: c
            input: q
            reference_answer: true
    """)
    result = load_eval_file(f, repo)
    assert result.cases == []
    assert errors_of(result) == [
        (2, "case #1: 'id' is a number (123), not text: AgentV 2.19 skips such a test"),
        (6, "'criteria' must be text, got a number"),
        (8, "case #3: 'eval_id' is true/false (True), not text: AgentV 2.19 skips such a test"),
        (12, "'expected_outcome' must be text, got true/false"),
        (17, "'reference_answer' must be text"),
    ]


def test_a_broken_suite_threshold_is_reported_once_at_its_own_line(repo: Path) -> None:
    """It was checked in each case and reported at every case's line, none of them where it is written."""
    f = write(repo / "evals/mark.eval.yaml", """
        description: d
        threshold: "0.9"
        tests:
          - id: a
            criteria: c
            input: q
          - id: b
            criteria: c
            input: q
    """)
    assert errors_of(load_eval_file(f, repo)) == [(2, "threshold '0.9' is not a number in 0..1")]


def test_segment_keys_agentv_does_not_read_are_refused(repo: Path) -> None:
    """AgentV reads a file segment's `value` only (`{type: file, path: x}` attaches nothing there, so the
    agent never sees the file), and an input text segment's `value` only (its prompt shows no `text`); an
    expected text segment it keeps as written, in the reference answer's JSON. Attaching or showing them here
    asked the agent with context AgentV never gives."""
    write(repo / "evals/ctx.md", "context\n")
    f = write(repo / "evals/segments.eval.yaml", """
        tests:
          - id: file-path
            criteria: c
            input: [{role: user, content: [{type: file, path: ctx.md}, {type: text, value: q}]}]
          - id: text-text
            criteria: c
            input: [{role: user, content: [{type: text, text: q}]}]
          - id: expected-text
            criteria: c
            input: q
            expected_output: [{role: assistant, content: [{type: text, text: the answer}]}]
    """)
    result = load_eval_file(f, repo)
    assert [(line, message.split(" (")[0]) for line, message in errors_of(result)] == [
        (4, "unknown key 'path' in a file segment: 'value' names its file"),
        (4, "file segment has no 'value'"),
        (7, "unknown key 'text' in a text segment"),
    ]
    assert [c.id for c in result.cases] == ["text-text", "expected-text"]
    assert result.cases[1].reference_answer == json.dumps([{"type": "text", "text": "the answer"}], indent=2)
