"""`preprocessors:` read as AgentV 4.42's grader-parser reads them, each problem at its line through `validate`:
AgentV refuses an entry that is not a mapping, has no type, has a command that is not a list of words, or names a
file it cannot find (the suite's fail the file, a grader's skip its test); the gate refuses each at its line, and
a command file outside the repository too. On a grader that never reads them they are checked and said unused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import write

GOOD = "[{type: xlsx, command: [python3, ../scripts/conv.py]}]"


def _validate(repo: Path, body: str) -> tuple[int, str]:
    write(repo / "scripts" / "conv.py", "print('rows')\n")
    write(repo / "evals" / "x.eval.yaml", body)
    done = run_cli("validate", "evals", cwd=repo)
    return done.returncode, done.stdout + done.stderr


def _suite(preprocessors: str, grader: str = "") -> str:
    return (f"preprocessors: {preprocessors}\ntests:\n  - id: a\n    input: hi\n    assertions:\n"
            f"      - name: g\n        type: llm-grader\n{grader}")


def test_a_good_suite_and_grader_entry_validate(repo: Path) -> None:
    code, said = _validate(repo, _suite(GOOD, f"        preprocessors: {GOOD}\n"))
    assert code == 0, said
    assert "AgentV 4.x (preprocessors: at line 1)" in said  # a key only AgentV 4.x reads


@pytest.mark.parametrize(("value", "line", "message"), [
    ("xlsx", 1, "the suite: preprocessors must be a list, got text"),
    ("[xlsx]", 1, "the suite: each preprocessor must be a mapping, got text"),
    ("[{command: [python3, ../scripts/conv.py]}]", 1, "the suite: preprocessor.type is required"),
    ("[{type: '  ', command: [python3, ../scripts/conv.py]}]", 1, "the suite: preprocessor.type is required"),
    ("[{type: xlsx}]", 1, "the suite: preprocessor 'xlsx' requires command"),
    ("[{type: xlsx, command: python3 ../scripts/conv.py}]", 1,
     "preprocessor 'xlsx': command must be a list of argv words (AgentV reads no command line here), got text"),
    ("[{type: xlsx, command: []}]", 1, "command must be a list of argv words"),
    ("[{type: xlsx, command: [python3, '']}]", 1, "command[1] must be a word"),
    ("[{type: xlsx, command: [python3, ../scripts/missing.py]}]", 1,
     "the suite: preprocessor 'xlsx' command file '../scripts/missing.py' not found"),
    ("[{type: xlsx, commands: [python3, ../scripts/conv.py]}]", 1,
     "unknown key 'commands' in a preprocessor (did you mean 'command'?)"),
], ids=["not-a-list", "not-a-mapping", "no-type", "blank-type", "no-command", "command-line", "empty-command",
        "empty-word", "missing-file", "unknown-key"])
def test_a_bad_suite_entry_is_refused_at_its_line(repo: Path, value: str, line: int, message: str) -> None:
    code, said = _validate(repo, _suite(value))
    assert code == 1, said
    assert f"evals/x.eval.yaml:{line}: " in said and message in said, said


def test_a_bad_grader_entry_is_refused_at_its_line(repo: Path) -> None:
    code, said = _validate(repo, _suite(GOOD, "        preprocessors:\n          - type: pdf\n"
                                              "            command: [python3, nowhere.py]\n"))
    assert code == 1, said
    assert "evals/x.eval.yaml:10: llm_judge evaluator 'g': preprocessor 'pdf' command file 'nowhere.py' not found" \
        in said, said


def test_a_command_file_outside_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "conv.py", "print(1)\n")
    code, said = _validate(repo, _suite(f"[{{type: xlsx, command: [python3, {outside}]}}]"))
    assert code == 1, said
    assert "resolves outside the repository root" in said


def test_on_a_grader_that_does_not_read_them_they_are_checked_and_said_unused(repo: Path) -> None:
    body = ("tests:\n  - id: a\n    input: hi\n    assertions:\n      - type: contains\n        value: hi\n"
            f"        preprocessors: {GOOD}\n")
    code, said = _validate(repo, body)
    assert code == 0, said
    assert ("evals/x.eval.yaml:7: warning: 'preprocessors' has no effect here: contains evaluator 'contains-hi': "
            "only an llm-grader reads the answer's file blocks through them") in said
    code, said = _validate(repo, body.replace("../scripts/conv.py", "../scripts/none.py"))
    assert code == 1 and "evals/x.eval.yaml:7: " in said and "'../scripts/none.py' not found" in said, said
