"""An eval case's `assert:` entries -> evaluator configs: what is refused (located at the entry), what
each accepted form becomes. In-process: one small eval file per row."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.loader import load_eval_file
from agentv_gate.loader.suite import LoadResult
from agentv_gate.models import DEFAULT_TARGET_MAX_CALLS, EVALUATOR_KINDS
from tests.helpers.files import write

HEAD = "tests:\n  - id: c\n    criteria: c\n    input: q\n    assert:\n"  # the first entry is on line 6
LONG_PROMPTS = ("x" * 1021 + ".md", "x" * 1500 + ".md")  # one line of 1024 characters or more: a prompt, not a file


def load(repo: Path, entries: str, allow_outside_root: bool = False) -> LoadResult:
    write(repo / "evals/judge.py", "print('{}')\n")
    write(repo / "evals/run-judge.py", "print('{}')\n", executable=True)
    write(repo / "evals/rubric.md", "Grade it.\n")
    write(repo / "evals/blank.md", "\n \n")
    write(repo / "evals/sub/keep", "")
    write(repo / ".agentv/assertions/word-count.py", "print('{}')\n")
    write(repo / ".agentv/assertions/brand-voice.py", "print('{}')\n")  # a name sorting before custom_assertion
    (repo / "evals/latin1.md").write_bytes(b"caf\xe9\n")
    if not (repo / "evals/loop").is_symlink():
        (repo / "evals/loop").symlink_to("loop")
    body = "".join(f"      {line}\n" for line in entries.splitlines())
    file = write(repo / "evals/e.eval.yaml", HEAD + body)
    return load_eval_file(file, repo, allow_outside_root=allow_outside_root)


JUDGE = "type: code_judge, script: [python3, judge.py]"
HUGE = "1" + "0" * 400  # an int float() cannot take
TRAJECTORY = "name: t, type: tool_trajectory"



@pytest.mark.parametrize(("entries", "line", "fragment"), [
    # args_match AgentV 2.19 reads nowhere: no args beside it, args: any, or on the evaluator with no item reading it
    (f"- {{{TRAJECTORY}, mode: in_order, expected: [{{tool: a, args_match: [q]}}]}}", 6,
     "'args_match' has no effect here: tool_trajectory evaluator 't': expected[0] (a) has no args, so any call of a "
     "matches"),
    (f"- {{{TRAJECTORY}, mode: exact, expected: [{{tool: a, args: any, args_match: exact}}]}}", 6,
     "'args_match' has no effect here: tool_trajectory evaluator 't': expected[0] (a) has args: any"),
    ("- name: t\n  type: tool_trajectory\n  mode: in_order\n  args_match: superset\n  expected:\n    - {tool: a}\n"
     "    - {tool: b, args: {q: x}, args_match: exact}", 9,
     "'args_match' has no effect here: tool_trajectory evaluator 't': no item reads it"),
    # a call's input and output, which no mode compares (AgentV 2.19's expected items keep tool, args,
    # args_match and max_duration_ms)
    ("- name: t\n  type: tool_trajectory\n  mode: in_order\n  expected:\n    - tool: a\n      input: {q: x}", 11,
     "'input' has no effect here: tool_trajectory 't': expected[0] is compared by its tool, args and "
     "max_duration_ms only"),
    ("- name: t\n  type: tool_trajectory\n  mode: in_order\n  expected:\n    - tool: a\n      output: done", 11,
     "'output' has no effect here"),
    # AgentV 4.42 skips these entries ("Skipping invalid evaluator entry", "invalid aggregator type"): so does the gate
    ("- 3\n- {type: is_json}", 6, "entry '3' (a number) has no effect here: AgentV skips an evaluator entry that is "
     "not a mapping"),
    ("- null\n- {type: is_json}", 6, "entry 'None' (null) has no effect here"),
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}],\n   aggregator: {type: majority_vote}}", 7,
     "composite 'c' has no effect here: its aggregator type 'majority_vote' is none AgentV knows"),
])
def test_a_setting_agentv_ignores_is_a_located_warning(repo: Path, entries: str, line: int, fragment: str) -> None:
    """AgentV 2.19 accepts these and ignores them (its own tool-trajectory examples hold each): the suite
    loads, and the warning says where and why the setting checks nothing."""
    result = load(repo, entries)
    assert result.errors == []
    [warning] = [p for p in result.warnings if "has no effect" in p.message]
    assert warning.line == line and warning.no_effect
    assert fragment in warning.message

@pytest.mark.parametrize(("entries", "line", "fragment"), [
    ("- {name: n, type: ''}", 6, "evaluator is missing 'type'"),
    ("- {name: n, type: null}", 6, "evaluator is missing 'type'"),
    ("- {name: n, type: custom_assertion}", 6, "unknown evaluator type 'custom_assertion'"),
    ("- {name: n, type: contains}", 6, "contains evaluator 'n': missing required field 'value' | 'value' to be set"),
    ("- {name: n, type: contains-any, value: [a], any: maybe}", 6, "contains evaluator 'n': field 'any': "),
    ("- {type: is_json}\n- {type: contains, value: a, nmae: x}", 7, "contains evaluator #2"),
    # a setting the type's own spelling already fixes, written the other way: which one holds is a guess
    ("- {type: icontains, value: a, case_sensitive: true}", 6,
     "'case_sensitive: true' contradicts `type: icontains`, which means case_sensitive: false"),
    ("- {type: contains-any, value: [a, b], any: false}", 6, "'any: false' contradicts `type: contains-any`"),
    ("- type: contains_all\n  value: [a, b]\n  any: true", 8,
     "'any: true' contradicts `type: contains_all`, which means any: false | type: contains_any"),
    ("- {name: n, type: is_json, weight: -1}", 6, "is_json evaluator 'n': weight -1.0 is not a finite number >= 0"),
    ("- {name: n, type: is_json, weight: .nan}", 6, "weight nan is not a finite number"),
    ("- {name: n, type: is_json, weight: .inf}", 6, "weight inf is not a finite number"),
    # a field setting its match never reads: refused at the field, not a stricter check than meant
    ("- name: n\n  type: field_accuracy\n  fields:\n    - {path: a, match: exact}\n"
     "    - {path: total, match: exact, tolerance: 0.01}", 10,
     "field_accuracy evaluator 'n': fields[1] (total): 'tolerance' is read only with match: numeric_tolerance "
     "(this field's match is exact)"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, match: date, relative: true}]}", 6,
     "fields[0] (a): 'relative' is read only with match: numeric_tolerance (this field's match is date)"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, match: numeric_tolerance, formats: [YYYY-MM-DD]}]}", 6,
     "fields[0] (a): 'formats' is read only with match: date (this field's match is numeric_tolerance)"),
    # an infinite tolerance passes every number; a negative one fails every number
    ("- name: n\n  type: field_accuracy\n  fields:\n    - path: a\n      match: numeric_tolerance\n      tolerance: .inf", 11,
     "field_accuracy evaluator 'n': fields[0] (a): tolerance inf is not a finite number >= 0"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, match: numeric_tolerance, tolerance: -0.5}]}", 6,
     "fields[0] (a): tolerance -0.5 is not a finite number >= 0"),
    # all_or_nothing is 1 only with no misses: a field's weight is never read
    ("- name: n\n  type: field_accuracy\n  aggregation: all_or_nothing\n  fields:\n    - {path: a, match: exact}\n"
     "    - {path: b, match: exact, weight: 2}",
     11, "fields[1] (b): 'weight' is not read with aggregation: all_or_nothing"),
    # a field_accuracy that checks nothing scored 1: no fields, or a path naming no field ("no expected value")
    ("- {name: f, type: field_accuracy, fields: []}", 6, "field_accuracy evaluator 'f': 'fields' is empty, so it checks nothing"),
    ("- name: f\n  type: field_accuracy\n  fields:\n    - {path: a, match: exact}\n    - {path: ''}", 10,
     "field_accuracy evaluator 'f': fields[1] (): path '' names no field"),
    ("- {name: f, type: field_accuracy, fields: [{path: '.[]'}]}", 6, "fields[0] (.[]): path '.[]' names no field"),
    ("- {name: f, type: field_accuracy, fields: [{path: d, match: date, formats: []}]}", 6,
     "fields[0] (d): 'formats' lists no format"),
    ("- {name: n, type: field_accuracy, fields: [{path: a}, {path: b, weight: -2}]}", 6,
     "field_accuracy evaluator 'n': fields[1].weight -2.0 is not a finite number >= 0"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, weight: 1e308}, {path: b, weight: 1e308}]}", 6,
     "the weights of its fields add up to more than the largest number"),
    (f"- {{name: n, {JUDGE}, timeout_seconds: 0}}", 6, "timeout_seconds 0.0 is not a finite number > 0"),
    (f"- {{name: n, {JUDGE}, timeout_seconds: .inf}}", 6, "timeout_seconds inf is not a finite number > 0"),
    # a custom assertion's or a code aggregator's timeout of 0 fell back to the default (120 s) unsaid
    ("- {type: word-count, timeout_seconds: 0}", 6,
     "custom_assertion evaluator 'word-count': timeout_seconds 0.0 is not a finite number > 0"),
    ("- {type: word-count, timeout: -3}", 6, "timeout_seconds -3.0 is not a finite number > 0"),
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: code_judge, path: [python3, "
     "judge.py], timeout_seconds: 0}}", 6, "composite evaluator 'c': aggregator.timeout_seconds 0 is not a finite"),
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: code_judge, path: [python3, "
     "judge.py], timeout_seconds: soon}}", 6, "aggregator.timeout_seconds 'soon' is not a finite number > 0"),
    ("- {name: n, type: llm_judge, prompt: {script: [python3, judge.py], timeout_seconds: -1}}", 6,
     "prompt.timeout_seconds -1.0 is not a finite number > 0"),
    ("- {name: n, type: regex, value: '('}", 6, "regex evaluator 'n': "),
    # flags JavaScript's RegExp refuses (AgentV's run errors on them): a repeated flag, u with v
    ("- {name: n, type: regex, value: x, flags: ii}", 6, "regex evaluator 'n': regex flag 'i' is given twice"),
    ("- {name: n, type: regex, value: x, flags: uv}", 6, "regex flags 'u' and 'v' cannot be used together"),
    ("- {name: n, type: is_json, required: 0}", 6, "is_json evaluator 'n': required 0 is not true, false or a number"),
    ("- {name: n, type: is_json, required: 1.5}", 6, "required 1.5 is not true, false or a number in (0, 1]"),
    ("- {name: n, type: is_json, required: -0.5}", 6, "required -0.5 is not true, false or a number in (0, 1]"),
    ("- {name: n, type: is_json, required: 'yes'}", 6, "required 'yes' is not true, false"),
    # negate other than true/false: AgentV reads only `=== true`, so `negate: yes` (text to YAML 1.2) would not invert
    ("- name: n\n  type: contains\n  value: a\n  negate: yes", 9, "contains evaluator 'n': negate 'yes' is not true or false"),
    ("- {name: n, type: is_json, negate: 1}", 6, "negate 1 is not true or false | negate: true"),
    # a member's negate: the composite scores its members as they are, so it would not invert
    ("- name: c\n  type: composite\n  assert:\n    - {name: b, type: is_json, negate: false}\n"
     "    - {name: a, type: is_json, negate: true}", 10,
     "'negate' on composite member 'a': negate applies to a test's own evaluators"),
    ("- {type: rubrics, criteria: [be kind], prompt: p}", 6, "'prompt' is not a setting of a `type: rubrics`"),
    ("- {type: rubrics}", 6, "`type: rubrics` evaluator has no 'criteria'"),
    # an llm_judge's config reaches a script prompt, or a text prompt through {{config}}; elsewhere nothing reads it
    ("- name: j\n  type: llm_judge\n  prompt: Grade {{answer}}\n  config: {k: 1}", 9,
     "llm_judge evaluator 'j': 'config' is read by no part of this judge: its prompt has no {{config}}"),
    ("- {name: j, type: llm_judge, config: {k: 1}}", 6, "'config' is read by no part of this judge: the default prompt"),
    ("- {name: j, type: llm_judge, rubrics: [be kind], config: {k: 1}}", 6,
     "'config' is read by no part of this judge: a rubric judge"),
    ("- {name: n, type: llm_judge, prompt: p, rubrics: [be kind]}", 6, "has both 'prompt' and 'rubrics'"),
    # a setting written under both its names: one of them was dropped unsaid
    ("- name: n\n  type: code_judge\n  script: [python3, judge.py]\n  command: [python3, judge.py, -v]", 9,
     "code_judge evaluator 'n': 'command' and 'script' are one setting (command is AgentV 2.19's name), written twice"),
    (f"- {{name: n, {JUDGE}, timeout: 5, timeout_seconds: 30}}", 6,
     "'timeout' and 'timeout_seconds' are one setting"),
    ("- {type: word-count, timeout: 5, timeout_seconds: 30}", 6, "'timeout' and 'timeout_seconds' are one setting"),
    ("- {name: n, type: llm_judge, prompt: {command: [python3, judge.py], script: [python3, judge.py]}}", 6,
     "llm_judge evaluator 'n': 'prompt.command' and 'prompt.script' are one setting"),
    ("- {name: n, type: code_judge, script: \"python3 'judge.py\"}", 6, "script cannot be split into arguments"),
    ("- {name: n, type: code_judge, script: {a: 1}}", 6, "code_judge evaluator 'n': field 'script': Input should be"),
    # A value no member of a union takes: the complaint about what the user wrote, not pydantic's first
    ("- {name: n, type: code_judge, script: [python3, [judge.py]]}", 6,
     "code_judge evaluator 'n': field 'script.1': Input should be a valid string"),
    ("- {name: n, type: llm_judge, prompt: {}}", 6, "llm_judge evaluator 'n': missing required field 'prompt.script'"),
    ("- {name: n, type: code_judge, script: '  '}", 6, "script is empty"),
    ("- {name: n, type: code_judge, script: [judge.py]}", 6, "script file 'judge.py' is not executable"),
    ("- {name: n, type: code_judge, script: [nowhere.py]}", 6, "script file 'nowhere.py' not found"),
    (f"- {{name: n, {JUDGE}, target: 3}}", 6, "code_judge 'n': target must be true or a mapping, got 3"),
    (f"- {{name: n, {JUDGE}, target: 0}}", 6, "code_judge 'n': target must be true or a mapping, got 0"),
    # another kind's settings on an evaluator are unknown keys, never read as that kind's
    ("- {name: n, type: is_json, prompt: {command: a.py, script: b.py}}", 6, "unknown key 'prompt' in is_json"),
    ("- {name: n, type: contains, value: x, aggregator: {path: x.py}}", 6, "unknown key 'aggregator' in contains"),
    (f"- {{name: n, {JUDGE}, target: {{max_calls: -1}}}}", 6, "code_judge 'n': target.max_calls: "),
    (f"- {{name: n, {JUDGE}, cwd: judge.py}}", 6, "cwd 'judge.py' is not a folder"),
    (f"- {{name: n, {JUDGE}, cwd: ../..}}", 6, "cwd '../..' resolves outside the repository root"),
    ("- {name: n, type: llm_judge, prompt: nowhere.py}", 6, "prompt template 'nowhere.py' not found"),
    (f"- {{name: n, {JUDGE}, cwd: \"a\\0b\"}}", 6, "cwd 'a\\x00b' is not a usable path"),
    (f"- {{name: n, {JUDGE}, cwd: {'d' * 5000}}}", 6, "is not a usable path"),
    (f"- {{name: n, {JUDGE}, cwd: loop}}", 6, "cwd 'loop' is not a usable path"),
    ("- {name: n, type: llm_judge, prompt: latin1.md}", 6, "prompt file 'latin1.md' cannot be read"),
    # an empty prompt (an unset ${{ VAR }}, an empty file) was sent to the judge as it was: nothing to grade by
    ("- {name: n, type: llm_judge, prompt: '  '}", 6, "llm_judge evaluator 'n': the prompt is empty, so the judge"),
    ("- {name: n, type: llm_judge, prompt: blank.md}", 6, "llm_judge evaluator 'n': prompt file 'blank.md' is empty"),
    ("- {type: rubrics, criteria: [be kind], rubrics: [be kind]}", 6, "'rubrics' is not a setting of a `type: rubrics`"),
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: code_judge, path: [python3, "
     "nowhere.py]}}", 6, "script file 'nowhere.py' not found"),
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: code_judge, path: [python3, "
     "[judge.py]]}}", 6, "script must be a string or a list of strings, got a list with a list in it"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}], "
     "aggregator: {type: weighted_average, weights: {a: 1, b: -1}}}", 6, "aggregator weight -1 for member 'b'"),
    # AgentV keeps only weights that are numbers: text or null would be weighted as it is never weighted there
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}], "
     "aggregator: {type: weighted_average, weights: {a: heavy}}}", 6, "aggregator weight 'heavy' for member 'a' is "
                                                                     "not a number"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}], "
     "aggregator: {type: weighted_average, weights: {b: null}}}", 6, "aggregator weight None for member 'b' is not"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}], "
     f"aggregator: {{type: weighted_average, weights: {{a: {HUGE}}}}}}}", 6, "for member 'a' is not a finite number"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}, "
     "{name: h, type: is_json}, {name: d, type: is_json}, {name: e, type: is_json}], aggregator: "
     "{type: weighted_average, weights: {d: 1e308, e: 1e308}}}", 6,
     "the weights of its members add up to more"),
    ("- {name: n, type: llm_judge, prompt: {command: [python3, judge.py], args: [x]}}", 6,
     "llm_judge evaluator 'n': unknown key 'prompt.args'"),
    ("- {name: r, type: regex, value: x, rubrics: 5}", 6, "unknown key 'rubrics' in regex evaluator 'r'"),
    # aggregator settings found only while judging (a text threshold), or never meant (a prompt naming no file)
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: threshold, threshold: half}}", 6,
     "composite 'c': aggregator threshold 'half' is not a number from 0 to 1"),
    ("- name: c\n  type: composite\n  assert: [{name: j, type: is_json}]\n  aggregator:\n    type: threshold\n    threshold: 1.5",
     11, "aggregator threshold 1.5 is not a number from 0 to 1"),
    ("- name: c\n  type: composite\n  assert: [{name: j, type: is_json}]\n  aggregator:\n    type: llm_judge\n"
     "    prompt: ./aggregate.md", 11, "composite 'c': aggregator prompt file './aggregate.md' not found"),
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: llm_judge, prompt: {file: x}}}", 6,
     "composite 'c': the aggregator prompt must be text, got a mapping"),
    # an aggregator weight for no member (a typo, or the name before an auto-name) was never read
    ("- name: c\n  type: composite\n  assert: [{name: accuracy, type: is_json}, {name: contains-x, type: contains, value: x}]\n"
     "  aggregator:\n    weights:\n      accuracy: 1\n      acurracy: 3", 12,
     "composite 'c': aggregator weights name 'acurracy', which is none of its members (accuracy, contains-x)"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}], aggregator: {type: weighted_average, "
     "weights: {a: -1}}}", 6, "composite evaluator 'c': aggregator weight -1 for member 'a' is not a finite"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}], aggregator: {type: weighted_average, "
     "weights: {a: .inf}}}", 6, "aggregator weight inf for member 'a'"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}], "
     "aggregator: {type: weighted_average, weights: {a: 1e308, b: 1e308}}}", 6,
     "composite evaluator 'c': the weights of its members add up to more"),
    ("- name: c\n  type: composite\n  assert:\n    - {name: b, type: is_json}\n    - {name: a, type: is_json, required: 1}",
     10, "'required' on composite member 'a': required gates apply to a test's own evaluators"),
    # a member weight nothing reads: the threshold aggregator counts passing members; aggregator.weights wins
    ("- name: c\n  type: composite\n  aggregator: {type: threshold}\n  assert:\n    - {name: b, type: is_json}\n"
     "    - {name: a, type: is_json, weight: 3}", 11,
     "'weight' on composite member 'a': the threshold aggregator counts the members that pass, it reads no weight"),
    ("- name: c\n  type: composite\n  aggregator: {weights: {a: 2}}\n  assert:\n    - {name: a, type: is_json, weight: 3}",
     10, "'weight' on composite member 'a': the aggregator's weights give it 2, so this weight is never read"),
    # text or a boolean where AgentV reads only a number (`typeof x === 'number'`) or `=== true`/`false`:
    # pydantic read `weight: '2'` as 2 and `case_sensitive: no` (text in YAML 1.2) as false
    ("- {name: n, type: contains, value: a, weight: '2'}", 6,
     "contains evaluator 'n': field 'weight': Input should be a valid number"),
    ("- {name: n, type: contains, value: a, weight: true}", 6, "field 'weight': Input should be a valid number"),
    ("- {name: n, type: icontains, value: a, case_sensitive: no}", 6, "field 'case_sensitive': Input should be a valid boolean"),
    ("- {name: n, type: contains-any, value: [a, b], any: yes}", 6, "field 'any': Input should be a valid boolean"),
    ("- {name: n, type: equals, value: a, trim: off}", 6, "field 'trim': Input should be a valid boolean"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, weight: '2'}, {path: b}]}", 6,
     "field 'fields.0.weight': Input should be a valid number"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, match: numeric_tolerance, tolerance: '0.5'}]}", 6,
     "field 'fields.0.tolerance': Input should be a valid number"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, match: numeric_tolerance, tolerance: 1, relative: yes}]}", 6,
     "field 'fields.0.relative': Input should be a valid boolean"),
    ("- {name: n, type: field_accuracy, fields: [{path: a, required: no}]}", 6,
     "field 'fields.0.required': Input should be a valid boolean"),
    ("- {name: n, type: latency, threshold: '5000'}", 6, "field 'threshold': Input should be a valid number"),
    ("- {name: n, type: cost, budget: '1'}", 6, "field 'budget': Input should be a valid number"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}], "
     "aggregator: {weights: {a: '3'}}}", 6,
     "composite evaluator 'c': aggregator weight '3' for member 'a' is not a number"),
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: is_json}], "
     "aggregator: {weights: {a: true}}}", 6,
     "composite evaluator 'c': aggregator weight true for member 'a' is not a number"),
    # AgentV weighs a member by aggregator.weights, else 1.0: its own weight is never read, whatever the aggregator
    ("- name: c\n  type: composite\n  assert:\n    - {name: b, type: is_json}\n    - {name: a, type: is_json, weight: 3}",
     10, "'weight' on composite member 'a': AgentV weighs a member by the aggregator's weights (1 when they do not "
         "name it), never by its own weight"),
    ("- name: c\n  type: composite\n  aggregator: {type: code_judge, path: [python3, judge.py]}\n  assert:\n"
     "    - {name: a, type: is_json, weight: 2}", 10, "'weight' on composite member 'a': AgentV weighs a member"),
    (f"- {{{TRAJECTORY}, mode: any_order}}", 6, "tool_trajectory evaluator 't': mode any_order needs 'minimums'"),
    (f"- {{{TRAJECTORY}, mode: any_order, minimums: {{a: 1}}, expected: [{{tool: a}}]}}", 6,
     "mode any_order reads only 'minimums'"),
    (f"- {{{TRAJECTORY}, mode: any_order, minimums: {{a: 1}}, args_match: exact}}", 6,
     "mode any_order reads only 'minimums'"),
    # a minimum of 0 is met with no call at all
    ("- name: t\n  type: tool_trajectory\n  mode: any_order\n  minimums:\n    a: 1\n    b: 0", 11,
     "tool_trajectory evaluator 't': minimums: b: 0 is met with no call at all, so it checks nothing"),
    (f"- {{{TRAJECTORY}, mode: in_order, minimums: {{a: 1}}, expected: [{{tool: a}}]}}", 6,
     "'minimums' is read only in mode any_order"),
    (f"- {{{TRAJECTORY}, mode: in_order}}", 6, "mode in_order needs a non-empty 'expected' list"),
    (f"- {{{TRAJECTORY}, mode: exact, expected: []}}", 6, "mode exact needs a non-empty 'expected' list"),
    (f"- {{{TRAJECTORY}, mode: superset, expected: []}}", 6, "mode superset needs a non-empty 'expected' list"),
    (f"- {{{TRAJECTORY}, mode: subset, expected: [{{tool: a}}, {{tool: b, max_duration_ms: 5}}]}}", 6,
     "max_duration_ms (b) is checked only in modes in_order and exact"),
    (f"- {{{TRAJECTORY}, mode: superset, expected: [{{tool: a, max_duration_ms: 5}}]}}", 6,
     "max_duration_ms (a) is checked only"),
    # args_match that compares nothing: no args beside it, a path the args lack, an empty list, or args it ignores
    ("- name: t\n  type: tool_trajectory\n  mode: in_order\n  expected:\n    - tool: a\n      args: {query: x}\n"
     "      args_match: [querry]", 12,
     "expected[0] (a): args_match path 'querry' is not in this item's args, so it compares nothing"),
    (f"- {{{TRAJECTORY}, mode: superset, expected: [{{tool: a, args: {{q: x}}, args_match: []}}]}}", 6,
     "expected[0] (a): args_match [] compares nothing"),
    (f"- {{{TRAJECTORY}, mode: in_order, expected: [{{tool: a, args: {{q: x}}, args_match: ignore}}]}}", 6,
     "expected[0] (a): 'args' is never compared with args_match: ignore"),
    (f"- {{{TRAJECTORY}, mode: in_order, args_match: ignore, expected: [{{tool: search, args: {{q: x}}}}]}}", 6,
     "args_match ignore never compares the args of expected[0] (search) | no 'args' on that item"),
    ("- {name: m, type: execution_metrics, target_exploration_ratio: 0.3, exploration_tolerance: 0.7}", 6,
     "exploration_tolerance 0.7 around target_exploration_ratio 0.3 accepts every ratio | a tolerance under 0.7"),
    ("- name: t\n  type: tool_trajectory\n  mode: in_order\n  args_match: [limit]\n  expected:\n"
     "    - {tool: a, args: {q: x}}", 9,
     "args_match [limit] compares none of the args of expected[0] (a)"),
    # a path on an aggregator that runs no script: refused, never resolved nor silently dropped
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: weighted_average, path: nowhere.py}}",
     6, "'path' in the aggregator of composite evaluator 'c': the weighted_average aggregator does not read it"),
    # an equals value AgentV skips (asString): not text, or empty
    ("- name: e\n  type: equals\n  value: {a: 1}", 6,
     "equals evaluator 'e': field 'value': Value error, the value is a mapping, and AgentV skips an equals"),
    ("- {name: e, type: equals, value: 42, trim: true}", 6, "the value is a number, and AgentV skips an equals"),
    # a limit no measurement can break: an infinite budget, or an exploration tolerance covering every ratio
    ("- {name: l, type: latency, threshold: .inf}", 6, "latency evaluator 'l': field 'threshold': Input should be a finite"),
    ("- {name: c, type: cost, budget: .inf}", 6, "field 'budget': Input should be a finite number"),
    ("- {name: m, type: execution_metrics, max_cost_usd: .inf}", 6, "field 'max_cost_usd': Input should be a finite"),
    (f"- {{{TRAJECTORY}, mode: in_order, expected: [{{tool: a, max_duration_ms: .inf}}]}}", 6,
     "field 'expected.0.max_duration_ms': Input should be a finite number"),
    ("- name: m\n  type: execution_metrics\n  target_exploration_ratio: 0.5\n  exploration_tolerance: 0.5", 9,
     "execution_metrics evaluator 'm': exploration_tolerance 0.5 around target_exploration_ratio 0.5 accepts every ratio"),
    ("- {name: m, type: execution_metrics, target_exploration_ratio: 0.9, exploration_tolerance: 2}", 6,
     "exploration_tolerance 2.0 around target_exploration_ratio 0.9 accepts every ratio"),
    # a weight for a member that is itself refused is not reported again as naming no member
    ("- {name: c, type: composite, assert: [{name: a, type: is_json}, {name: b, type: nonsense}], "
     "aggregator: {weights: {b: 1}}}", 6, "nonsense"),
    ("- {name: u, type: token_usage}", 6, "token_usage evaluator 'u' sets no limit"),
    ("- {name: m, type: execution_metrics}", 6, "execution_metrics evaluator 'm' sets no limit"),
    ("- {name: m, type: execution_metrics, max_tool_calls: 3, exploration_tolerance: 0.1}", 6,
     "exploration_tolerance without target_exploration_ratio"),
])
def test_a_refused_entry_is_located_and_says_why(repo: Path, entries: str, line: int, fragment: str) -> None:
    result = load(repo, entries)
    [problem] = result.errors
    assert problem.line == line
    assert fragment in f"{problem.message} | {problem.expected}"
    assert len(result.cases) == 1  # only the broken entry is dropped


def _resolved(repo: Path, name: str) -> str:
    return str((repo / "evals" / name).resolve())


@pytest.mark.parametrize(("entries", "expected"), [
    ("- is-json", [{"type": "llm_judge", "name": "rubrics", "generation": "4.x"}]),  # a sign-less file: 4.42's criterion
    ("- {type: icontains_any, value: [a, b]}",
     [{"type": "contains", "name": "icontains-any-2", "case_sensitive": False, "any": True}]),
    ("- {type: icontains_all, value: [a]}", [{"type": "contains", "case_sensitive": False, "any": False}]),
    ("- {type: contains_any, value: [a]}", [{"type": "contains", "case_sensitive": True, "any": True}]),
    ("- {name: n, type: is_json, weight: 0, required: 1}\n- {name: m, type: is_json, required: 0.5}\n"
     "- {name: o, type: is_json, required: false}",
     [{"weight": 0.0, "required": 1}, {"required": 0.5}, {"required": False}]),
    ("- {name: wc, type: word-count, command: fast}\n- {name: r, type: rubrics, criteria: [be kind], weight: 2}",
     [{"name": "wc", "type": "custom_assertion", "model_extra": {"command": "fast"}},  # its config, as written
      {"name": "r", "type": "llm_judge", "weight": 2.0}]),
    ("- {name: c, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: code_judge, "
     "path: [python3, judge.py, 3], cwd: sub}}\n"
     "- {name: d, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: code_judge, script: run-judge.py -v}}",
     [{"resolved_aggregator_script": ["python3", "@judge.py", "3"], "resolved_aggregator_cwd": "@sub"},
      {"resolved_aggregator_script": ["@run-judge.py", "-v"], "resolved_aggregator_cwd": None}]),
    ("- {type: word-count, min: 3}",
     [{"type": "custom_assertion", "name": "word-count", "assertion": "word-count"}]),
    ("- {type: brand-voice}", [{"type": "custom_assertion", "name": "brand-voice", "assertion": "brand-voice"}]),
    ("- {name: j, type: llm_judge, prompt: p, target: judge-b}", [{"target": "judge-b"}]),  # a judge target's name
    # a code judge's own keys are its config as written, even where an llm_judge would read them
    (f"- {{name: n, {JUDGE}, prompt: {{command: [x]}}, rubrics: 5}}",
     [{"model_extra": {"prompt": {"command": ["x"]}, "rubrics": 5}}]),
    ("- {name: n, type: code_judge, command: python3 judge.py --flag -v 7, timeout: 5}",
     [{"resolved_script": ["python3", "@judge.py", "--flag", "-v", "7"], "timeout_seconds": 5.0}]),
    ("- {name: n, type: code_judge, script: [run-judge.py, '7'], cwd: sub, timeout_seconds: 0.5}",
     [{"resolved_script": ["@run-judge.py", "7"], "resolved_cwd": "@sub", "timeout_seconds": 0.5}]),
    (f"- {{name: a, {JUDGE}, target: true}}\n- {{name: b, {JUDGE}, target: false}}\n"
     f"- {{name: c, {JUDGE}, target: {{max_calls: 3}}}}",
     [{"target": {"max_calls": DEFAULT_TARGET_MAX_CALLS}}, {"target": None}, {"target": {"max_calls": 3}}]),
    ("- {name: a, type: llm_judge, prompt: judge.py}\n- {name: b, type: llm_judge, prompt: rubric.md}\n"
     f"- {{name: c, type: llm_judge, prompt: {LONG_PROMPTS[0]}}}\n- {{name: d, type: llm_judge}}\n"
     f"- {{name: e, type: llm_judge, prompt: {LONG_PROMPTS[1]}}}",
     [{"resolved_prompt_script": ["python3", "@judge.py"], "resolved_prompt_text": None},
      {"resolved_prompt_text": "Grade it.\n", "resolved_prompt_path": "@rubric.md"},
      {"resolved_prompt_text": LONG_PROMPTS[0], "resolved_prompt_path": None},
      {"resolved_prompt_text": None, "resolved_prompt_script": None},
      {"resolved_prompt_text": LONG_PROMPTS[1], "resolved_prompt_path": None}]),
    ("- {name: j, type: llm_judge, prompt: 'Use {{ config }}', config: {k: 1}}\n"
     "- {name: s, type: llm_judge, prompt: judge.py, config: {k: 2}}",
     [{"config": {"k": 1}}, {"config": {"k": 2}}]),
    ("- {name: n, type: llm_judge, prompt: {command: [python3, judge.py], timeout_seconds: 5, config: {a: 1}}}",
     [{"prompt": {"script": ["python3", "judge.py"], "timeout_seconds": 5.0, "config": {"a": 1}},
       "resolved_prompt_script": ["python3", "@judge.py"]}]),
    ("- {name: c, type: composite, assert: [{name: is-json, type: is_json}, {name: equals-x, type: equals, value: x}], "
     "aggregator: {type: weighted_average, weights: {is-json: 0, equals-x: 2}}}",
     [{"type": "composite", "evaluators": ["is-json", "equals-x"]}]),
    (f"- {{{TRAJECTORY}, mode: subset, expected: []}}\n"
     f"- {{{TRAJECTORY}, mode: in_order, expected: [{{tool: a, max_duration_ms: 5}}]}}\n"
     f"- {{{TRAJECTORY}, mode: any_order, minimums: {{a: 1}}}}",
     [{"mode": "subset"}, {"mode": "in_order"}, {"mode": "any_order"}]),
    ("- {name: u, type: token_usage, max_output: 5}\n"
     "- {name: m, type: execution_metrics, target_exploration_ratio: 0.5, exploration_tolerance: 0.1}\n"
     "- {name: w, type: execution_metrics, target_exploration_ratio: 0.3, exploration_tolerance: 0.5}",
     [{"max_output": 5}, {"exploration_tolerance": 0.1}, {"exploration_tolerance": 0.5}]),
    ("- {name: all, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: threshold, threshold: 1}}\n"
     "- {name: any, type: composite, assert: [{name: j, type: is_json}], aggregator: {type: threshold, threshold: 0}}",
     [{"aggregator": {"type": "threshold", "threshold": 1}}, {"aggregator": {"type": "threshold", "threshold": 0}}]),
])
def test_an_accepted_entry_becomes_its_config(repo: Path, entries: str, expected: list[dict[str, Any]]) -> None:
    result = load(repo, entries)
    assert result.errors == [] and result.warnings == []
    [case] = result.cases
    assert len(case.evaluators) == len(expected)
    for config, want in zip(case.evaluators, expected, strict=True):
        assert config.source_line is not None and config.source_file == repo / "evals/e.eval.yaml"
        for key, value in want.items():
            got = getattr(config, key)
            if key == "evaluators":
                got = [member.name for member in got]
            elif hasattr(got, "model_dump"):
                got = got.model_dump()
            elif isinstance(value, str) and value.startswith("@"):
                value = _resolved(repo, value[1:])
                got = str(got)
            elif isinstance(value, list):
                value = [_resolved(repo, v[1:]) if v.startswith("@") else v for v in value]
            assert got == value, key


def test_a_2x_files_unnamed_judges_are_skipped_each_with_a_located_no_effect_warning(repo: Path) -> None:
    """2.19 names only its assertion types (`rubrics` among them) and skips any other unnamed evaluator
    ("Skipping evaluator with missing name"); the gate once ran these as `llm_judge_2`, `code_judge_4`, ..."""
    result = load(repo, "- {name: a, type: llm_judge, prompt: p}\n- {type: llm_judge, prompt: q}\n"
                        "- {type: rubrics, criteria: [be kind]}\n- {type: code_judge, script: [python3, judge.py]}\n"
                        "- {type: latency, threshold: 5}\n- {type: contains, value: x}\n- {type: rubric, criteria: [k]}")
    [case] = result.cases
    assert [(e.name, e.type) for e in case.evaluators] == [("a", "llm_judge"), ("rubrics", "llm_judge"),
                                                          ("contains-x", "contains")]
    assert result.errors == []
    assert [(w.line, w.no_effect) for w in result.warnings] == [(7, True), (9, True), (10, True), (12, True)]
    assert all("no name" in w.message and "AgentV 2.19" in w.message for w in result.warnings)


def test_a_command_not_on_path_is_a_warning(repo: Path) -> None:
    result = load(repo, "- {name: j, type: code_judge, script: [no-such-interpreter-here, judge.py]}")
    assert result.errors == []
    assert [(w.line, w.message) for w in result.warnings] == [
        (6, "command 'no-such-interpreter-here' is not on PATH here")]


def test_a_cwd_outside_the_root_is_taken_when_allowed(repo: Path) -> None:
    result = load(repo, f"- {{name: n, {JUDGE}, cwd: ../..}}", allow_outside_root=True)
    assert result.errors == []
    assert result.cases[0].evaluators[0].resolved_cwd == repo.parent.resolve()  # type: ignore[union-attr]


def test_a_single_evaluator_written_as_text_is_located_at_its_key(repo: Path) -> None:
    file = write(repo / "evals/e.eval.yaml", "tests:\n  - id: c\n    criteria: c\n    input: q\n\n    evaluator: nonsense\n")
    [problem] = load_eval_file(file, repo).errors
    assert (problem.line, problem.message) == (6, "unknown evaluator type 'nonsense'")
    write(repo / "evals/e.eval.yaml", "tests:\n  - id: c\n    criteria: c\n    input: q\n    grader: is_json\n")
    result = load_eval_file(file, repo)
    assert result.errors == [] and [c.type for c in result.cases[0].evaluators] == ["is_json"]


def test_assert_must_be_a_list_and_is_refused_at_its_own_line(repo: Path) -> None:
    file = write(repo / "evals/e.eval.yaml", HEAD.replace("assert:", "assert: is-json"))
    [problem] = load_eval_file(file, repo).errors
    assert (problem.line, problem.message) == (5, "evaluators must be a list")  # a scalar has no line: its key's
    suite = write(repo / "evals/s.eval.yaml", "description: d\nassertions: contains\n" + HEAD.replace("    assert:\n", ""))
    [problem] = load_eval_file(suite, repo).errors
    assert (problem.line, problem.message) == (2, "evaluators must be a list")


def test_a_bare_script_name_found_only_on_path_is_run_from_there(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo.parent / "bin/tool.py", "print('{}')\n", executable=True)
    monkeypatch.setenv("PATH", f"{repo.parent / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = load(repo, "- {name: a, type: code_judge, script: tool.py --fast}\n"
                        "- {name: b, type: code_judge, script: [python3, tool.py]}\n"
                        "- {name: c, type: code_judge, script: [./tool.py]}")
    # only a bare command word falls back to PATH: not an argument, not a path with a `/`
    assert [(p.line, p.message.split(" (")[0]) for p in result.problems] == [
        (7, "script file 'tool.py' not found"), (8, "script file './tool.py' not found")]
    assert result.cases[0].evaluators[0].resolved_script == ["tool.py", "--fast"]  # type: ignore[union-attr]


def test_an_unknown_type_is_told_every_type_it_could_be(repo: Path) -> None:
    [problem] = load(repo, "- {name: n, type: nonsense}").errors
    assert problem.message == "unknown evaluator type 'nonsense'"
    listed, script = (problem.expected or "").removeprefix("one of ").split(", or a script ")
    assert sorted(listed.split(", ")) == sorted(kind for kind in EVALUATOR_KINDS if kind != "custom_assertion")
    assert script == ".agentv/assertions/nonsense.py"


def test_a_single_unnamed_evaluator_is_named_and_told_apart_as_the_first(repo: Path) -> None:
    file = write(repo / "evals/e.eval.yaml", HEAD.replace("assert:", "evaluator: {type: llm_judge, prompt: p, nmae: x}"))
    result = load_eval_file(file, repo)
    [problem] = result.errors
    assert "llm_judge evaluator #1" in problem.message and "'nmae'" in problem.message
    assert [e.name for e in result.cases[0].evaluators] == ["llm_judge"]


@pytest.mark.parametrize("entry", ["- {name: c, type: composite}", "- {name: c, type: composite, assert: []}",
                                   "- {name: c, type: composite, assert: {a: 1}}",
                                   "- {name: c, type: composite, assert: [{type: is_json}, {type: contains, value: x}]}"])
def test_a_composite_with_no_member_to_run_is_skipped_with_a_no_effect_warning(repo: Path, entry: str) -> None:
    """Both AgentVs skip a composite without a member list, or with none it keeps (each unnamed member skipped):
    "missing evaluators (or assert) array", "no valid member evaluators"; the gate once refused the file."""
    result = load(repo, entry + "\n- {name: j, type: is_json}")
    [case] = result.cases
    assert [e.name for e in case.evaluators] == ["j"] and result.errors == []
    assert [(w.line, w.no_effect) for w in result.warnings if "composite 'c' has no effect here" in w.message] == [(6, True)]


def test_a_2x_files_plain_string_entries_are_skipped_each_with_a_no_effect_warning(repo: Path) -> None:
    """2.19's parseEvaluatorList skips an entry that is not an object ("Skipping invalid evaluator entry ...
    (expected object)"): a type's name (`- is-json`), a sentence and a number alike; the gate once ran the first
    as `is-json` and the second as a rubric (a judge 2.19 never asks). Checked with agentv 2.19."""
    write(repo / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')
    result = load(repo, "- is-json\n- {name: c, type: contains, value: q}\n- Mentions the capital\n- 3")
    [case] = result.cases
    assert [e.name for e in case.evaluators] == ["c"] and result.errors == []
    assert [(w.line, w.no_effect) for w in result.warnings] == [(6, True), (8, True), (9, True)]
    assert "'is-json' (text) has no effect here" in result.warnings[0].message


def test_a_composite_members_plain_strings_are_skipped_in_both_generations(repo: Path) -> None:
    """Both AgentVs skip a member that is not an object ("Skipping invalid member evaluator ... (expected
    object)"); 4.42 makes criteria of a test's own strings only, never of a composite's members."""
    result = load(repo, "- name: g\n  type: composite\n  assertions:\n    - Mentions the capital\n"
                        "    - {name: c, type: contains, value: q}")
    [case] = result.cases
    [composite] = case.evaluators
    assert [m.name for m in composite.evaluators] == ["c"] and result.errors == []
    assert [(w.line, w.no_effect) for w in result.warnings] == [(9, True)]
