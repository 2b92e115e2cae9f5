"""Which AgentV an eval file is read as (loader/file_generation.py), through the real CLI."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id

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

