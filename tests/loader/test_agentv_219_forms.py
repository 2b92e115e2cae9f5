"""Forms AgentV 2.19's own examples write, read as AgentV 2.19 reads them (issue: its examples run unchanged).

Each was refused once: the project config's pattern lists, a rubric's `score_ranges` as a map, an LLM
aggregator prompt given as a file, a suite-level `evaluatorTemplate`. What AgentV acts on is acted on
alike; what it accepts and ignores is a located warning, which `--strict` makes an error.
"""

from __future__ import annotations

from pathlib import Path

from agentv_gate.loader import load_eval_file
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write

MOCK = "targets:\n  - name: default\n    provider: mock\n    response: Paris\n"


def _attaching(repo: Path) -> Path:
    write(repo / "docs/style.instructions.md", "be nice")
    write(repo / "docs/notes.md", "plain notes")
    write(repo / "docs/house.md", "house rules")
    return write(repo / "evals/files.eval.yaml", """
        input:
          - role: system
            content: [{type: file, value: /docs/house.md}]
        tests:
          - id: f
            criteria: c
            input:
              - role: user
                content:
                  - {type: file, value: /docs/style.instructions.md}
                  - {type: file, value: /docs/notes.md}
                  - {type: text, value: Summarise.}
    """)


def test_guideline_files_are_the_ones_the_project_config_names(tmp_path: Path) -> None:
    """AgentV 2.19 calls an attached file a guideline only when the nearest `.agentv/config.yaml`'s
    `guideline_patterns` match it (relative to the repository root): with no config, none is, except the
    suite-level input's files, which are guidelines always. A guideline leaves the message text."""
    make_repo(tmp_path, MOCK)
    suite = _attaching(tmp_path)
    [case] = load_eval_file(suite, tmp_path).cases
    assert case.guideline_files == [str((tmp_path / "docs/house.md").resolve())]
    assert "be nice" in str(case.input_messages[-1].content)

    write(tmp_path / ".agentv/config.yaml", "guideline_patterns: ['**/*.instructions.md']\n")
    [case] = load_eval_file(suite, tmp_path).cases
    assert case.guideline_files == [str((tmp_path / f"docs/{name}").resolve())
                                    for name in ("house.md", "style.instructions.md")]
    assert "be nice" not in str(case.input_messages[-1].content)
    assert "plain notes" in str(case.input_messages[-1].content)


def test_eval_patterns_choose_the_suites_of_a_folder(tmp_path: Path) -> None:
    """Given a folder, AgentV discovers suites with the config's `eval_patterns` (case-insensitive, no
    node_modules): `confusion.eval.yaml` is not a `dataset*.yaml`, and a baseline JSONL is no suite."""
    make_repo(tmp_path, MOCK)
    case = "tests:\n  - {id: a, input: q, assert: [{type: contains, value: Paris}]}\n"
    write(tmp_path / "ex/one/evals/Dataset.eval.yaml", case)
    write(tmp_path / "ex/two/evals/confusion.eval.yaml", case.replace("id: a", "id: b"))
    write(tmp_path / "ex/one/evals/dataset.eval.baseline.jsonl", '{"id": "x"}\n')
    write(tmp_path / "ex/.agentv/config.yaml", "eval_patterns:\n  - '**/evals/**/dataset*.yaml'\n")
    listed = run_cli("run", "ex", "--list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "a" in listed.stdout.split() and "b" not in listed.stdout.split()
    (tmp_path / "ex/.agentv/config.yaml").unlink()
    (tmp_path / "ex/one/evals/dataset.eval.baseline.jsonl").unlink()  # any JSONL under evals/ is a suite there
    both = run_cli("run", "ex", "--list", cwd=tmp_path)  # the gate's own rule: every eval file and evals/ file
    assert "b" in both.stdout.split()


def test_a_config_key_no_agentv_knows_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    make_repo(tmp_path, MOCK)
    write(tmp_path / "evals/s.eval.yaml", "tests:\n  - {id: a, input: q, criteria: c}\n")
    write(tmp_path / ".agentv/config.yaml", "$schema: agentv-config-v2\nexecution:\n  verbose: true\n")
    assert run_cli("validate", "evals", cwd=tmp_path).returncode == 0  # AgentV's run-time preferences
    write(tmp_path / ".agentv/config.yaml", "guideline_paterns: ['**/*.md']\nexecution:\n  verbos: true\n")
    proc = run_cli("validate", "evals", cwd=tmp_path)
    assert proc.returncode == 1
    assert (".agentv/config.yaml:1: unknown key 'guideline_paterns' in .agentv/config.yaml "
            "(did you mean 'guideline_patterns'?)") in proc.stdout
    assert ".agentv/config.yaml:3: unknown key 'verbos' in .agentv/config.yaml's execution (did you mean 'verbose'?)" \
        in proc.stdout
    write(tmp_path / ".agentv/config.yaml", "guideline_patterns: '**/*.md'\n")
    proc = run_cli("validate", "evals", cwd=tmp_path)
    assert ".agentv/config.yaml:1: 'guideline_patterns' must be a list of glob patterns (text)" in proc.stdout


def test_score_ranges_written_as_a_map_are_bands_from_each_lower_bound(tmp_path: Path) -> None:
    """AgentV normalises `{0: Wrong, 5: Partly right, 10: Fully right}` to [0-4], [5-9], [10-10]."""
    make_repo(tmp_path, MOCK)
    suite = write(tmp_path / "evals/r.eval.yaml", """
        tests:
          - id: r
            input: q
            assert:
              - type: rubrics
                criteria:
                  - id: acc
                    score_ranges: {0: Wrong, 5: Partly right, 10: Fully right}
    """)
    result = load_eval_file(suite, tmp_path)
    assert result.errors == []
    [item] = result.cases[0].evaluators[0].rubrics  # type: ignore[union-attr]
    assert [(band.score_range, band.outcome) for band in item.score_ranges] == [
        ((0, 4), "Wrong"), ((5, 9), "Partly right"), ((10, 10), "Fully right")]
    write(suite, suite.read_text().replace("{0: Wrong,", "{1: Wrong,"))
    errors = load_eval_file(suite, tmp_path).errors
    assert any("a score_ranges map must start at 0 (got 1)" in problem.message for problem in errors), errors


def test_an_aggregator_prompt_naming_a_file_is_that_files_text(tmp_path: Path) -> None:
    """AgentV 2.19 sends the path itself as the prompt (its judge never sees the results); the author meant
    the file, which the gate reads (a deliberate difference, in the README)."""
    make_repo(tmp_path, MOCK)
    write(tmp_path / "prompts/agg.md", "Results:\n{{EVALUATOR_RESULTS_JSON}}\nScore them.\n")
    suite = write(tmp_path / "evals/c.eval.yaml", """
        tests:
          - id: c
            input: q
            assert:
              - name: both
                type: composite
                assert: [{name: contains-Paris, type: contains, value: Paris}]
                aggregator: {type: llm-judge, prompt: ../prompts/agg.md}
    """)
    result = load_eval_file(suite, tmp_path)
    assert result.errors == []
    assert result.cases[0].evaluators[0].aggregator["prompt"].startswith("Results:\n{{EVALUATOR_RESULTS_JSON}}")  # type: ignore[union-attr]


def test_a_suite_level_evaluator_template_warns_and_strict_refuses_it(tmp_path: Path) -> None:
    make_repo(tmp_path, MOCK)
    write(tmp_path / "evals/t.eval.yaml", "evaluatorTemplate: judge.md\n"
                                          "tests:\n  - {id: a, input: q, assert: [{type: contains, value: Paris}]}\n")
    ran = run_cli("run", "evals", "--no-cache", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "evals/t.eval.yaml:1: warning: 'evaluatorTemplate' has no effect here: AgentV 2.19 reads" in ran.stderr
    strict = run_cli("run", "evals", "--no-cache", "--strict", cwd=tmp_path)
    assert strict.returncode == 2
    assert "evals/t.eval.yaml:1: 'evaluatorTemplate' has no effect here" in strict.stderr


def test_an_llm_judge_s_evaluator_template_warns_where_written_and_is_not_refused(tmp_path: Path) -> None:
    """AgentV accepts `evaluatorTemplate` on an llm_judge and never reads it; the gate refused it."""
    make_repo(tmp_path, MOCK)
    write(tmp_path / "evals/t.eval.yaml", "evalcases:\n  - id: a\n    expected_outcome: Paris\n"
                                          "    input_messages: [{role: user, content: q}]\n    execution:\n"
                                          "      evaluators:\n        - {name: j, type: llm_judge, evaluatorTemplate: x.md}\n")
    ran = run_cli("validate", "evals", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "evals/t.eval.yaml:7: warning: 'evaluatorTemplate' has no effect here: llm_judge evaluator 'j'" in ran.stdout
    strict = run_cli("validate", "evals", "--strict", cwd=tmp_path)
    assert strict.returncode != 0
    assert "evals/t.eval.yaml:7:" in strict.stdout and "'evaluatorTemplate' has no effect here" in strict.stdout
