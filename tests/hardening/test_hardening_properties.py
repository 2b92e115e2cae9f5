"""Property tests: whatever an eval file or a judge says, the answer is our clear error, never a crash.

The loader's contract is that `load_eval_file` returns problems (file:line, what was expected)
and never raises; the LLM judge reply parser's is that it returns a verdict in 0..1 or raises
`JudgeReplyError`; the code-judge output parser returns `(result, None)` or `(None, why)`.
Hypothesis feeds them arbitrary text and arbitrary structures built from the keys they look for.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentv_gate.errors import JudgeReplyError, ResultsReadError
from agentv_gate.evaluators.code_judge import parse_judge_output
from agentv_gate.judging.judge_reply import JudgeReply, parse_judge_reply
from agentv_gate.loader import LoadResult, load_eval_file
from agentv_gate.models import EvalCase
from agentv_gate.report.jsonl import read_results
from tests.helpers.files import write

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

KEYS = ["tests", "evalcases", "eval_cases", "cases", "id", "eval_id", "input", "input_messages", "question",
        "criteria", "expected_outcome", "outcome", "expected_output", "expected_messages", "reference_answer",
        "assert", "assertions", "evaluators", "evaluator", "grader", "execution", "skip_defaults", "type",
        "name", "script", "command", "cwd", "value", "values", "threshold", "weight", "prompt", "role", "content",
        "text", "path", "target", "timeout", "timeout_seconds", "config", "input_files", "metadata",
        "conversation_id", "required", "negate", "flags", "fields", "aggregator", "file", "tool_calls"]
KINDS = ["code_judge", "llm_judge", "contains", "regex", "equals", "is_json", "field_accuracy", "composite",
         "json_extract", "file", "text", "image", "code", "rubric", "unknown-kind", ""]
PATHS = ["judge.py", "./judge.py", "../outside.py", "/etc/passwd", "prompts/q.md", "missing.md", "python3 judge.py",
         "'unterminated", "cases.jsonl", "~/x", "", ".", "..", "judge.py --flag", "a\x00b"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**6, max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(KINDS), st.sampled_from(PATHS),
    st.sampled_from(["user", "assistant", "system", "tool"]), st.text(max_size=20),
)
keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=8))
structures = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=6)),
    max_leaves=30,
)
odd = st.one_of(scalars, structures)


def mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good` three times in four, anything at all otherwise: deep enough to reach the inner parsers."""
    return st.one_of(good, good, good, odd)


words = st.text(alphabet="abcxyz-_ :#/.%", min_size=1, max_size=10)
valid_kinds = st.sampled_from(["code_judge", "llm_judge", "contains", "regex", "equals", "is_json", "field_accuracy",
                               "composite", "json_extract"])
segments = st.fixed_dictionaries({"type": mostly(st.sampled_from(["text", "file"]))},
                                 optional={"value": mostly(st.sampled_from(PATHS + ["hello"])), "path": odd})
messages = st.fixed_dictionaries(
    {"role": mostly(st.sampled_from(["user", "assistant", "system", "tool"]))},
    optional={"content": mostly(st.one_of(words, st.lists(segments, max_size=3))), "tool_calls": odd},
)
evaluator: st.SearchStrategy[dict[str, Any]] = st.deferred(lambda: st.fixed_dictionaries(
    dict[str, st.SearchStrategy[Any]]({"type": mostly(valid_kinds)}),
    optional={"name": mostly(words), "script": mostly(st.sampled_from(PATHS)), "cwd": mostly(st.sampled_from(PATHS)),
              "value": mostly(words), "threshold": odd, "weight": odd, "prompt": mostly(st.sampled_from(PATHS)),
              "evaluators": mostly(st.lists(evaluator, max_size=2)), "aggregator": odd, "fields": odd, "config": odd,
              "timeout": odd, "negate": odd, "required": odd, "flags": odd, "path": odd},
))
cases = st.fixed_dictionaries(
    {"id": mostly(words), "input": mostly(st.one_of(words, st.lists(messages, min_size=1, max_size=3))),
     "criteria": mostly(words)},
    optional={"input_messages": odd,
              "expected_output": mostly(st.one_of(words, st.lists(messages, max_size=2))),
              "assert": mostly(st.lists(evaluator, max_size=3)), "evaluator": mostly(evaluator),
              "execution": mostly(st.fixed_dictionaries({}, optional={"evaluators": st.lists(evaluator, max_size=2),
                                                                      "skip_defaults": odd, "threshold": odd})),
              "threshold": odd, "input_files": mostly(st.lists(st.sampled_from(PATHS), max_size=2)),
              "metadata": odd, "target": odd, "reference_answer": odd, "conversation_id": odd},
)
documents = st.one_of(
    structures,
    st.dictionaries(st.sampled_from(["tests", "evalcases", "assert", "execution", "threshold", "target", "input"]),
                    structures, max_size=4),
    st.fixed_dictionaries({"tests": st.lists(st.dictionaries(keys, structures, max_size=8), max_size=4)}),
    st.fixed_dictionaries({"tests": st.lists(cases, max_size=3)},
                          optional={"assert": st.lists(evaluator, max_size=2), "threshold": odd, "input": odd}),
    st.fixed_dictionaries({"evalcases": st.lists(cases, max_size=3)},
                          optional={"execution": st.fixed_dictionaries({}, optional={"evaluators": st.lists(evaluator,
                                                                                                            max_size=2)})}),
)


@pytest.fixture(autouse=True)
def referenced_files(repo: Path) -> None:
    """What the generated files name: a judge, a prompt and a JSONL file inside `repo`, a script outside.

    The `repo` fixture is shared by all the examples of one test (hence the suppressed
    function_scoped_fixture health check): every example writes its own file and only reads these.
    """
    write(repo / "evals" / "judge.py", "print('{\"score\": 1}')\n")
    write(repo / "evals" / "prompts" / "q.md", "Question: {{question}}\n")
    write(repo / "evals" / "cases.jsonl", '{"id": "x", "input": "hi", "criteria": "c"}\n')
    write(repo.parent / "outside.py", "print(1)\n")


def check_load(repo: Path, name: str, data: bytes) -> LoadResult:
    """Load `data` as eval file `name`; the only acceptable outcome is a LoadResult."""
    path = repo / "evals" / name
    path.write_bytes(data)
    result = load_eval_file(path, repo_root=repo)
    assert isinstance(result, LoadResult)
    assert all(isinstance(case, EvalCase) for case in result.cases)
    for problem in result.problems:
        assert isinstance(problem.line, int) and problem.line >= 0
        assert isinstance(problem.message, str) and problem.message
        assert problem.severity in ("error", "warning")
        str(problem)  # the located line `validate` prints
    return result


@SETTINGS
@given(text=st.text(max_size=400))
@example(text="tests: [")
@example(text="tests:\n  - id: a\n    input: hi\n    assert: [{type: code_judge, script: [python3, ../outside.py]}]\n")
@example(text="a: &a [*a]")
@example(text="[" * 2000)
@example(text="tests:\n  - id: a\n    id: b\n")
@example(text="? [a, b]\n: c\n")
@example(text="tests: !!python/object/apply:os.system [echo pwned]\n")
def test_loader_never_raises_on_arbitrary_text(repo: Path, text: str) -> None:
    check_load(repo, "fuzz.eval.yaml", text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(data=st.binary(max_size=200))
@example(data=b"\xff\xfe\x00t\x00e")
@example(data=b"\xef\xbb\xbftests: []\n")
def test_loader_never_raises_on_arbitrary_bytes(repo: Path, data: bytes) -> None:
    check_load(repo, "bytes.eval.yaml", data)


@SETTINGS
@given(doc=documents)
@example(doc={"tests": [{"id": "a", "input": {"role": 3}, "criteria": "c"}]})
@example(doc={"tests": [{"id": "a", "input": [{"role": "user", "content": [{"type": "file", "value": None}]}]}]})
@example(doc={"tests": [{"id": "a", "input": "x", "assert": [{"type": "composite", "evaluators": [{"type": 3}]}]}]})
@example(doc={"tests": [{"id": "a", "input": "x", "threshold": float("nan"), "criteria": "c"}]})
@example(doc={"evalcases": [{"id": [1], "input_messages": [{"role": "user", "content": {"type": "file"}}]}]})
@example(doc={"tests": "cases.jsonl"})
@example(doc={"tests": [{"id": "a", "input": "x", "assert": [{"type": "regex", "value": "("}]}]})
def test_loader_never_raises_on_arbitrary_yaml_structures(repo: Path, doc: Any) -> None:
    check_load(repo, "structured.eval.yaml", yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass"))


@SETTINGS
@given(rows=st.lists(structures, max_size=4))
def test_loader_never_raises_on_arbitrary_jsonl_rows(repo: Path, rows: list[Any]) -> None:
    text = "\n".join(json.dumps(row) for row in rows)
    check_load(repo, "rows.eval.jsonl", text.encode("utf-8", "surrogatepass"))


def test_a_located_problem_names_file_line_and_expectation(repo: Path) -> None:
    """The properties above only prove 'no crash'; this pins what a problem looks like."""
    result = check_load(repo, "bad.eval.yaml", b"tests:\n  - id: a\n    input: hi\n    criteria: c\n    threshold: 7\n")
    assert [str(p) for p in result.errors] == [
        f"{repo / 'evals' / 'bad.eval.yaml'}:5: threshold 7 is not a number in 0..1 (expected a number from 0 to 1)"
    ]


# ---------------------------------------------------------------- judge replies

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=10)),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.text(max_size=5), children, max_size=3)),
    max_leaves=10,
)
verdicts = st.fixed_dictionaries(
    {"score": st.one_of(st.floats(allow_nan=False), st.integers(), st.text(max_size=6), st.none(), st.booleans(),
                        st.sampled_from([0, 1, 0.5, "0.7", "1e400", -0.0]))},
    optional={"hits": json_values, "misses": json_values, "reasoning": json_values},
)
wrappers = st.sampled_from(["{}", "```json\n{}\n```", "Sure! {} Hope that helps.", "<think>{{\"score\": 9}}</think>{}",
                            "{} {}", "```\n{}", "{{{}", "{}}}}", "[{}]"])


DEEP = '{"score": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
"""Valid JSON nested far past Python's recursion limit (json.loads raises RecursionError on it)."""


def check_reply(text: str) -> None:
    try:
        reply = parse_judge_reply(text)
    except JudgeReplyError as exc:
        assert str(exc)
        return
    assert isinstance(reply, JudgeReply)
    assert 0.0 <= reply.score <= 1.0 and math.isfinite(reply.score)
    assert all(isinstance(item, str) and item for item in reply.hits + reply.misses)
    assert reply.reasoning is None or isinstance(reply.reasoning, str)


@SETTINGS
@given(text=st.text(max_size=300))
@example(text="{" * 5000)
@example(text='{"score": 1e999}')
@example(text='{"score": NaN}')
@example(text='{"score": "  "}')
@example(text='```json\n{"score": 0.5, "hits": {"a": 1}}\n```')
@example(text=DEEP)
@example(text="```json\n" + DEEP + "\n```")
def test_judge_reply_parser_raises_only_its_documented_error(text: str) -> None:
    check_reply(text)


@SETTINGS
@given(verdict=verdicts, wrapper=wrappers, noise=st.text(max_size=20))
def test_judge_reply_parser_on_verdict_shaped_json(verdict: dict[str, Any], wrapper: str, noise: str) -> None:
    body = json.dumps(verdict, allow_nan=True)
    check_reply(noise + wrapper.replace("{}", body, 1).replace("{}", body))


@SETTINGS
@given(text=st.one_of(st.text(max_size=300), st.builds(json.dumps, verdicts)))
@example(text='{"score": true}')
@example(text="log line\n" + '{"score": 0.5}')
@example(text='{"score": 1e999}')
@example(text=DEEP)
@example(text="log line\n" + DEEP)
def test_code_judge_output_parser_never_raises(text: str) -> None:
    data, problem = parse_judge_output(text)
    assert (data is None) != (problem is None)
    if data is not None:
        assert 0.0 <= data["score"] <= 1.0
    else:
        assert isinstance(problem, str) and problem


UNUSABLE_PATHS = ["x" * 5000, "a\x00b", "~nouser/x.py", "dir", "loop", "fifo", "/", " ", "judge.py\n", "C:\\x.py"]
PATH_FIELDS = {
    "script": lambda w: {"type": "code_judge", "script": ["python3", w]},
    "cwd": lambda w: {"type": "code_judge", "script": "python3 judge.py", "cwd": w},
    "prompt": lambda w: {"type": "llm_judge", "prompt": w + ".md"},
    "prompt script": lambda w: {"type": "llm_judge", "prompt": {"script": ["python3", w]}},
}


@pytest.mark.parametrize("weird", UNUSABLE_PATHS)
def test_unusable_paths_are_located_problems_not_crashes(repo: Path, weird: str) -> None:
    """Names too long for the OS, NUL bytes, unknown ~users, folders, symlink loops and FIFOs."""
    evals = repo / "evals"
    (evals / "dir").mkdir(exist_ok=True)
    if not (evals / "loop").is_symlink():
        (evals / "loop").symlink_to("loop")
    if not (evals / "fifo").exists():
        os.mkfifo(evals / "fifo")  # reading it would block forever: it must never be opened
    # A script token or prompt that does not look like a path is an argument or inline text: no crash is all.
    for make in PATH_FIELDS.values():
        check_load(repo, "paths.eval.yaml", yaml.safe_dump({"tests": [{"id": "a", "input": "q", "assert": [make(weird)]}]},
                                                           allow_unicode=True).encode())
    # These name files or folders: each is a located error, and the case does not load.
    docs: list[Any] = [] if weird == "dir" else [{"tests": [{"id": "a", "input": "q", "assert": [PATH_FIELDS["cwd"](weird)]}]}]
    docs += [
        {"tests": [{"id": "a", "input": [{"role": "user", "content": [{"type": "file", "value": weird}]}], "criteria": "c"}]},
        {"tests": [{"id": "a", "input": "q", "input_files": [weird], "criteria": "c"}]},
        {"tests": weird},
    ]
    for doc in docs:
        result = check_load(repo, "paths.eval.yaml", yaml.safe_dump(doc, allow_unicode=True).encode())
        assert result.errors and not result.cases, (doc, result.problems)


# ---------------------------------------------------------------- results files handed to `merge`


@SETTINGS
@given(lines=st.lists(st.one_of(st.text(max_size=60), st.builds(json.dumps, structures),
                                st.builds(json.dumps, st.fixed_dictionaries({"eval_id": st.text(max_size=5)},
                                                                            optional={"verdict": scalars,
                                                                                      "score": scalars}))),
                      max_size=5))
@example(lines=["[" * 100_000, "{}"])
@example(lines=['{"eval_id": "a", "verdict": "pass", "score": 1}', '{"eval_id": "b", "verd'])
def test_results_reader_raises_only_its_documented_error(repo: Path, lines: list[str]) -> None:
    """A shard's results file may come from anywhere (a CI artifact); merge must not crash on it."""
    path = repo / "shard.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    try:
        results, problems = read_results([path])
    except ResultsReadError as exc:
        assert str(path) in str(exc)
        return
    assert all(isinstance(p, str) for p in problems)
