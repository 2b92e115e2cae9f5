"""Which AgentV an eval file is read as (loader/file_generation.py), through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_gate.judging.grader_prompts import GRADER_SYSTEM_PROMPT, GRADER_TEMPLATE
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

CHAT = "/v1/chat/completions"
TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: The capital is Paris.\n"
HALF = """tests:
  - id: half
    input: Capitals of France and Italy?
    assertions:
      - {type: contains, value: Paris}
      - {type: contains, value: Rome}
"""


def test_assertions_key_reads_the_file_as_4x_and_its_pass_mark_fails_half(tmp_path: Path) -> None:
    make_repo(tmp_path, TARGETS)
    write(tmp_path / "evals/x.eval.yaml", HALF)
    proc = run_cli("run", "evals/x.eval.yaml", "-v", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # 0.5 < 4.42's 0.8, as AgentV 4.42.4 fails it
    assert "evals/x.eval.yaml: AgentV 4.x (assertions: at line 4)" in proc.stdout + proc.stderr
    row = rows_by_id(tmp_path / RESULTS)["half"]
    assert row["agentv_generation"] == "4.x"
    assert "assertions: at line 4" in row["agentv_generation_reason"]


def test_a_2_19_team_pins_2_19_in_gate_yaml(tmp_path: Path) -> None:
    make_repo(tmp_path, TARGETS)
    write(tmp_path / ".agentv/gate.yaml", 'agentv:\n  version: "2.19"\n')
    write(tmp_path / "evals/x.eval.yaml", HALF)
    proc = run_cli("validate", "evals/x.eval.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "evals/x.eval.yaml: AgentV 2.x (gate.yaml agentv.version at line 2)" in proc.stdout + proc.stderr
    proc = run_cli("run", "evals/x.eval.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # 2.19's pass mark 0.5
    assert rows_by_id(tmp_path / RESULTS)["half"]["agentv_generation"] == "2.x"


def test_a_per_glob_override_wins_over_the_repository_version(tmp_path: Path) -> None:
    make_repo(tmp_path, TARGETS)
    write(tmp_path / ".agentv/gate.yaml", 'agentv:\n  version: "2.19"\n  overrides:\n'
                                          '    - {paths: ["evals/new/**"], version: "4.42"}\n')
    write(tmp_path / "evals/new/x.eval.yaml", HALF)
    proc = run_cli("run", "evals/new/x.eval.yaml", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr


JUDGE = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': 1.0}))\n"
MIXED_IN_ONE_CASE = HALF + "      - {type: code_judge, script: [python3, j.py]}\n"
MIXED_ACROSS_CASES = HALF + "  - id: later\n    input: q\n    evaluators:\n      - {name: j, type: llm_judge, prompt: p}\n"
MIXED_WITH_THE_SUITE = ("governance: {owner: team}\ntests:\n  - id: c\n    input: q\n    evaluators:\n"
                        "      - {name: j, type: code_judge, script: [python3, j.py]}\n")


def _refused(tmp_path: Path, text: str, line: int, signs: tuple[str, str]) -> None:
    write(tmp_path / "evals/x.eval.yaml", text)
    for command, code in (("validate", 1), ("run", 2)):
        proc = run_cli(command, "evals/x.eval.yaml", cwd=tmp_path)
        out = proc.stdout + proc.stderr
        assert proc.returncode == code, (command, out)
        said = [ln for ln in out.splitlines() if ln.startswith(f"evals/x.eval.yaml:{line}: this file mixes AgentV")]
        assert said, (command, out)  # an error at the conflicting line, not a warning
        assert all(sign in said[0] for sign in signs), said[0]
    assert not (tmp_path / RESULTS).exists()  # nothing was run


def test_a_file_mixing_both_generations_in_one_case_is_refused_at_the_later_sign(tmp_path: Path) -> None:
    """AgentV 4.42 skips the code_judge (the case passes on `contains` alone); 2.19 never reads `assertions:`."""
    make_repo(tmp_path, TARGETS)
    write(tmp_path / "evals/j.py", JUDGE)
    _refused(tmp_path, MIXED_IN_ONE_CASE, 7, ("assertions: (line 4)", "AgentV 4.x", "type: code_judge", "AgentV 2.x"))


def test_a_later_case_of_the_other_generation_is_refused_at_its_sign(tmp_path: Path) -> None:
    make_repo(tmp_path, TARGETS)
    _refused(tmp_path, MIXED_ACROSS_CASES, 10, ("type: llm_judge", "assertions: (line 4)"))


def test_a_case_sign_against_the_suite_s_own_sign_is_refused(tmp_path: Path) -> None:
    make_repo(tmp_path, TARGETS)
    write(tmp_path / "evals/j.py", JUDGE)
    _refused(tmp_path, MIXED_WITH_THE_SUITE, 6,
             ("type: code_judge (line 6) is AgentV 2.x only", "governance: (line 1) is AgentV 4.x only"))


def test_a_pinned_file_may_mix_both_generations_while_it_migrates(tmp_path: Path) -> None:
    """The pin says which AgentV the file is for: nothing is left to guess, so nothing is refused."""
    make_repo(tmp_path, TARGETS)
    write(tmp_path / "evals/j.py", JUDGE)
    write(tmp_path / ".agentv/gate.yaml", 'agentv:\n  version: "2.19"\n')
    write(tmp_path / "evals/x.eval.yaml", MIXED_IN_ONE_CASE)
    proc = run_cli("validate", "evals/x.eval.yaml", cwd=tmp_path)
    assert proc.returncode == 0 and "mixes" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_one_generation_s_names_alone_are_never_refused(tmp_path: Path) -> None:
    """`evaluators:` is read by both AgentVs: beside a code-grader it is no 2.x sign."""
    make_repo(tmp_path, TARGETS)
    write(tmp_path / "evals/j.py", JUDGE)
    for text in ("tests:\n  - id: c\n    input: q\n    evaluators:\n"
                 "      - {name: j, type: code-grader, command: [python3, j.py]}\n",
                 "tests:\n  - id: c\n    input: q\n    evaluators:\n"
                 "      - {name: j, type: code_judge, script: [python3, j.py]}\n"):
        write(tmp_path / "evals/x.eval.yaml", text)
        proc = run_cli("validate", "evals/x.eval.yaml", cwd=tmp_path)
        assert proc.returncode == 0 and "mixes" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_a_pin_the_gate_cannot_read_is_refused_at_its_line_never_ignored(tmp_path: Path) -> None:
    """A typo in the pin would read a 2.19 team's files as 4.42 without a word: each is refused where written."""
    make_repo(tmp_path, TARGETS)
    write(tmp_path / "evals/x.eval.yaml", HALF)
    for gate, line, said in (
            ('agentv:\n  versoin: "2.19"\n', 2, "unknown key 'versoin' in agentv"),
            ('agentv:\n  version: two\n', 2, "agentv.version 'two' names no AgentV version"),
            ('agentv:\n  version: "2.19"\n  overrides:\n    - {path: [evals/*], version: "4.42"}\n', 4,
             "unknown key 'path' in an agentv override"),
            ('agentv:\n  overrides:\n    - {paths: [evals/*]}\n', 3, "an agentv override needs 'version'"),
            ('agentv: "2.19"\n', 1, "agentv must be a mapping")):
        write(tmp_path / ".agentv/gate.yaml", gate)
        for command in ("validate", "run"):
            proc = run_cli(command, "evals/x.eval.yaml", cwd=tmp_path)
            out = proc.stdout + proc.stderr
            assert proc.returncode in (1, 2) and f".agentv/gate.yaml:{line}: {said}" in out, (gate, command, out)
    write(tmp_path / ".agentv/gate.yaml", 'agentv:\n  version: "2.19"\n  overrides:\n'
          '    - {paths: [evals/other/*], version: "4.42"}\n')
    assert run_cli("run", "evals/x.eval.yaml", cwd=tmp_path).returncode == 0  # read, and 2.19's 0.5 passes half


SIGNLESS_JUDGED = """tests:
  - id: capital
    input: What is the capital of France?
    criteria: Names Paris
    expected_output: Paris.
"""


def _judged_repo(tmp_path: Path, fake_llm: FakeLLMServer, score: float) -> Path:
    make_repo(tmp_path, f"""targets:
  - name: default
    provider: mock
    response: Paris is the capital of France.
    judge_target: judge
  - name: judge
    provider: openai
    base_url: {fake_llm.url}
    model: judge-model
""")
    write(tmp_path / "evals/x.eval.yaml", SIGNLESS_JUDGED)
    fake_llm.set_default(CHAT, FakeReply.openai(json.dumps(
        {"score": score, "assertions": [{"text": "Names Paris", "passed": True}]})))
    return tmp_path


@pytest.mark.parametrize(("score", "code", "verdict"), [(0.8, 0, "pass"), (0.75, 1, "fail")])
def test_a_sign_less_file_s_default_judge_speaks_4_42_and_passes_at_0_8(tmp_path: Path, fake_llm: FakeLLMServer,
                                                                      score: float, code: int, verdict: str) -> None:
    """No pin and no sign: read as AgentV 4.42, so its implicit judge sends 4.42's template and reply schema (as
    AgentV 4.42.4 sends them, captured on a loopback judge) and reads a `{score, assertions}` reply, at 0.8."""
    repo = _judged_repo(tmp_path, fake_llm, score)
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == code, proc.stdout + proc.stderr
    sent = {m["role"]: m["content"] for m in fake_llm.requests_for(CHAT)[0].json["messages"]}
    assert sent["system"] == GRADER_SYSTEM_PROMPT
    assert sent["user"] == (GRADER_TEMPLATE.replace("{{criteria}}", "Names Paris")
                            .replace("{{input}}", "What is the capital of France?")
                            .replace("{{expected_output}}", "Paris.")
                            .replace("{{output}}", "Paris is the capital of France."))
    row = rows_by_id(repo / RESULTS)["capital"]
    assert (row["verdict"], row["threshold"], row["agentv_generation"]) == (verdict, 0.8, "4.x")
    assert row["scores"][0]["hits"] == ["Names Paris"]


def test_a_file_pinned_to_2_19_keeps_2_19_s_default_judge(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = _judged_repo(tmp_path, fake_llm, 0.75)
    write(repo / ".agentv/gate.yaml", 'agentv:\n  version: "2.19"\n')
    proc = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # 2.19's pass mark 0.5
    sent = {m["role"]: m["content"] for m in fake_llm.requests_for(CHAT)[0].json["messages"]}
    assert sent["user"].startswith("You are an expert evaluator.") and sent["system"] != GRADER_SYSTEM_PROMPT


FIELDS = "abcdefghij"
ANSWER = {name: 1 for name in FIELDS}
EXPECTED = {name: (1 if i < 5 else 2) for i, name in enumerate(FIELDS)}  # 5 fields match, 5 do not


@pytest.mark.parametrize(("pin", "listed"), [(None, 5), ("2.19", 4)])
def test_field_accuracy_lists_every_field_in_a_4x_file_and_caps_at_4_in_a_2x_one(tmp_path: Path, pin: str | None,
                                                                                listed: int) -> None:
    """AgentV 2.19 keeps 4 hits and 4 misses (evaluators/field-accuracy.ts:418-419); 4.42 one assertion per field
    (graders/field-accuracy.ts:386-392)."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n"
                        f"    response: {json.dumps(json.dumps(ANSWER))}\n")
    if pin is not None:
        write(tmp_path / ".agentv/gate.yaml", f'agentv:\n  version: "{pin}"\n')
    fields = "".join(f"          - {{path: {name}, match: exact}}\n" for name in FIELDS)
    write(tmp_path / "evals/x.eval.yaml", "tests:\n  - id: f\n    input: q\n"
          f"    expected_output: {json.dumps(json.dumps(EXPECTED))}\n"
          "    assertions:\n      - name: fields\n        type: field-accuracy\n        fields:\n" + fields)
    run_cli("run", "evals", cwd=tmp_path)
    score = rows_by_id(tmp_path / RESULTS)["f"]["scores"][0]
    assert (len(score["hits"]), len(score["misses"]), score["score"]) == (listed, listed, 0.5), score


@pytest.mark.parametrize(("pin", "judge", "reported"), [(None, "llm-grader", 0.0), ("2.19", "llm_judge", 1.0)])
def test_a_case_whose_llm_grader_never_answers_scores_as_each_agentv_reports_it(
        tmp_path: Path, fake_llm: FakeLLMServer, pin: str | None, judge: str, reported: float) -> None:
    """An LLM judge with no readable reply after 3 asks is `skip`. AgentV 4.42 makes the case an execution error
    scored 0 (orchestrator.ts:672-689, `score: skippedEvaluatorError ? 0 : score.score`); AgentV 2.19 leaves the
    judge out of the mean (orchestrator.ts:2224-2225), so the case keeps its other evaluators' score. Either way
    the gate's verdict is `error`."""
    _judged_repo(tmp_path, fake_llm, 1.0)
    fake_llm.set_default(CHAT, FakeReply.openai("no idea"))
    if pin is not None:
        write(tmp_path / ".agentv/gate.yaml", f'agentv:\n  version: "{pin}"\n')
    write(tmp_path / "evals/x.eval.yaml", SIGNLESS_JUDGED + "    assert:\n      - {type: contains, value: Paris}\n"
                                                          f"      - {{name: q, type: {judge}}}\n")
    proc = run_cli("run", "evals", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = rows_by_id(tmp_path / RESULTS)["capital"]
    assert (row["verdict"], row["score"]) == ("error", reported), row
