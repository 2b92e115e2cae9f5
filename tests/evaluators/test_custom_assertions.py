"""Custom assertion types: `type: <name>` runs `.agentv/assertions/<name>.py` (or an executable) as a code judge."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentv_gate.evaluators.custom_assertion import CustomAssertionEvaluator
from agentv_gate.loader import load_eval_file
from agentv_gate.models import CustomAssertionConfig, EvalCase, EvaluationContext
from tests.helpers.cli import run_cli
from tests.helpers.evaluation import score_of
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows, rows_by_id
from tests.helpers.suites import PARIS_TARGETS

WORD_COUNT = """\
import json, sys
payload = json.load(sys.stdin)
words = len(payload["answer"].split())
limit = payload["config"]["max_words"]
ok = words <= limit
print(json.dumps({"score": 1.0 if ok else 0.0, "hits": [f"{words} words"] if ok else [],
                  "misses": [] if ok else [f"{words} words > {limit}"], "reasoning": "counted"}))
"""

SHOUTS = """#!/bin/sh
cat > /dev/null
echo '{"score": 0, "misses": ["not shouting"]}'
"""


@pytest.fixture()
def project(repo: Path) -> Path:
    """The Paris agent, a `word-count` assertion in the root's `.agentv/` and a `shouts` one in `evals/.agentv/`."""
    make_repo(repo, PARIS_TARGETS)
    write(repo / ".agentv/assertions/word-count.py", WORD_COUNT)
    write(repo / "evals/.agentv/assertions/shouts", SHOUTS, executable=True)  # nearer the eval file than the root's
    return repo


def write_suite(project: Path, assertions: str) -> Path:
    return write(project / "evals/deep/suite.eval.yaml",
                 "tests:\n  - id: capital\n    input: Capital of France?\n    criteria: Paris\n    assert:\n"
                 + textwrap.indent(textwrap.dedent(assertions).strip("\n"), "      ") + "\n")


def test_a_config_built_in_code_without_a_script_is_an_error() -> None:
    config = CustomAssertionConfig(name="tone", assertion="tone")  # the loader always resolves the script
    case = EvalCase(id="c", source_file=Path("/tmp/x.eval.yaml"), suite="x", question="q")
    score = score_of(CustomAssertionEvaluator(), EvaluationContext(eval_case=case, candidate="a", evaluator=config))
    message = "custom assertion 'tone' has no script (the loader finds it)"
    assert (score.score, score.misses, score.error) == (0.0, [message], message)


def test_assertion_scripts_are_found_up_the_tree_and_run_as_code_judges(project: Path) -> None:
    write_suite(project, """
        - {type: word-count, max_words: 10}
        - {name: short, type: word-count, max_words: 3}
        - {type: shouts, weight: 0.5}
    """)
    # a suite-wide assertion runs in its suite file's directory, also for a case from a case file elsewhere;
    # its stdin is laid out as AgentV's (JSON indented by 2, text unescaped), for a script reading it as text
    write(project / ".agentv/assertions/where.py", """\
        import json, os, sys
        text = sys.stdin.buffer.read().decode("utf-8")
        line = text.splitlines()[1]
        hits = [os.path.basename(os.getcwd()), f"indent {len(line) - len(line.lstrip())}", f"raw {'é' in text}"]
        print(json.dumps({"score": 1, "hits": hits}))
    """)
    write(project / "evals/shared.eval.yaml", "assert:\n  - {type: where}\ntests:\n  - file://cases/more.yaml\n")
    write(project / "evals/cases/more.yaml", "- id: more\n  input: Capitale de la France ? Répondez.\n  criteria: Paris\n")
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = rows_by_id(project / RESULTS)
    assert rows["more"]["hits"] == ["evals", "indent 2", "raw True"]  # not "cases", where the case itself was written
    row = rows["capital"]
    results = {r["name"]: r for r in row["evaluator_results"]}
    assert results["word-count"]["score"] == 1.0 and results["word-count"]["hits"] == ["6 words"]
    assert results["short"]["score"] == 0.0 and results["short"]["misses"] == ["6 words > 3"]
    assert results["shouts"]["misses"] == ["not shouting"]
    assert results["short"]["type"] == "custom_assertion"
    assert results["short"]["evaluator_raw_request"]["assertion"] == "word-count"


def test_every_key_it_does_not_read_reaches_the_script_as_config(project: Path) -> None:
    # `command` and `target` are a code judge's own settings; an assertion has neither, so they are its config
    write(project / ".agentv/assertions/show.py", "import json, sys\n"
          "print(json.dumps({'score': 1, 'reasoning': json.dumps(json.load(sys.stdin)['config'], sort_keys=True)}))\n")
    file = write_suite(project, "- {type: show, command: fast, target: 3, mode: y, timeout: 9, required: true, negate: false}")
    [case] = load_eval_file(file, project).cases
    [config] = case.evaluators
    context = EvaluationContext(eval_case=case, candidate="a", evaluator=config)
    score = score_of(CustomAssertionEvaluator(), context)
    assert score.reasoning == '{"command": "fast", "mode": "y", "target": 3}', score.reasoning


def test_a_crashing_assertion_is_an_error_case(project: Path) -> None:
    (project / ".agentv/assertions/boom.py").write_text("import sys\nsys.stderr.write('kaboom')\nsys.exit(3)\n")
    write_suite(project, "- {type: boom}\n- {type: contains, value: Paris}")
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 1
    [row] = read_rows(project / RESULTS)
    assert row["verdict"] == "error" and row["score"] == 0.5
    assert any("kaboom" in m for m in row["misses"]), row["misses"]
    assert row["misses"][0].startswith("Code evaluator failed: assertion 'boom' (boom.py) "), row["misses"]


@pytest.mark.parametrize(("files", "assertion", "message"), [
    ({}, "{type: nonsense}", "unknown evaluator type 'nonsense' (expected one of code_judge"),
    ({}, "{type: ../escape}", "unknown evaluator type '../escape'"),
    ({}, "{type: custom_assertion, assertion: word-count}", "unknown evaluator type 'custom_assertion'"),
    ({"evals/.agentv/assertions/tone.ts": "export default 1"}, "{type: tone}",
     "custom assertion 'tone' is"),
    ({"evals/.agentv/assertions/plain": "#!/bin/sh\n"}, "{type: plain}", "is not executable"),
])
def test_unknown_or_unrunnable_types_are_located_errors(project: Path, files: dict[str, str], assertion: str,
                                                        message: str) -> None:
    for name, text in files.items():
        (project / name).write_text(text)
    write_suite(project, f"- {assertion}")
    proc = run_cli("validate", "evals", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("evals/deep/suite.eval.yaml:6: ") and message in proc.stdout, proc.stdout
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 2 and message in proc.stderr


GRADES = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({{'score': {score}, 'hits': ['{where}']}}))\n"


def test_the_nearest_assertion_folder_wins_over_the_root_s(project: Path) -> None:
    """AgentV searches from the eval file's folder up to the root, nearest first: a suite's own
    `grade` shadows the repository's."""
    write(project / ".agentv/assertions/grade.py", GRADES.format(score=0, where="root"))
    write(project / "evals/.agentv/assertions/grade.py", GRADES.format(score=0.5, where="evals"))
    write(project / "evals/deep/.agentv/assertions/grade.py", GRADES.format(score=1, where="deep"))
    write(project / "evals/deep/suite.eval.yaml", "tests:\n  - {id: c, input: Hi, assert: [{type: grade}]}\n")
    write(project / "evals/mid.eval.yaml", "tests:\n  - {id: m, input: Hi, assert: [{type: grade}]}\n")
    write(project / "top.eval.yaml", "tests:\n  - {id: t, input: Hi, assert: [{type: grade}]}\n")
    run_cli("run", "evals", "top.eval.yaml", cwd=project)
    rows = rows_by_id(project / RESULTS)
    assert {case_id: rows[case_id]["hits"] for case_id in "cmt"} == {"c": ["deep"], "m": ["evals"], "t": ["root"]}


SLEEPS = "import json, sys, time\njson.load(sys.stdin)\ntime.sleep({seconds})\nprint(json.dumps({{'score': 1}}))\n"


def test_an_assertion_s_own_timeout_seconds_is_honoured_both_ways(project: Path) -> None:
    """Its own `timeout_seconds` kills a slow script sooner than the run's --judge-timeout, and lets one
    run longer than it."""
    write(project / ".agentv/assertions/slow.py", SLEEPS.format(seconds=3))
    write(project / ".agentv/assertions/brief.py", SLEEPS.format(seconds=1.5))
    write(project / "evals/s.eval.yaml", """
        tests:
          - {id: cut, input: Hi, assert: [{type: slow, timeout_seconds: 1}]}
          - {id: allowed, input: Hi, assert: [{type: brief, timeout_seconds: 30}]}
    """)
    proc = run_cli("run", "evals/s.eval.yaml", "--judge-timeout", "0.5", cwd=project)
    rows = rows_by_id(project / RESULTS)
    assert rows["cut"]["verdict"] == "error" and "1s" in rows["cut"]["error"], rows["cut"]["error"]
    assert rows["allowed"]["verdict"] == "pass", rows["allowed"].get("error")
    assert proc.returncode == 1


def test_an_assertion_linked_outside_the_repository_is_refused_unless_allowed(project: Path) -> None:
    outside = write(project.parent / "elsewhere/away.py", GRADES.format(score=1, where="outside"))
    (project / ".agentv/assertions/away.py").symlink_to(outside)
    write(project / "evals/s.eval.yaml", "tests:\n  - {id: c, input: Hi, assert: [{type: away}]}\n")
    proc = run_cli("run", "evals/s.eval.yaml", cwd=project)
    assert proc.returncode == 2 and "custom assertion 'away' resolves outside the repository root" in proc.stderr
    proc = run_cli("run", "evals/s.eval.yaml", "--allow-outside-root", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert rows_by_id(project / RESULTS)["c"]["hits"] == ["outside"]


def test_a_python_script_wins_over_an_executable_of_the_same_name_in_one_folder(project: Path) -> None:
    write(project / "evals/.agentv/assertions/both.py", GRADES.format(score=1, where="python"))
    write(project / "evals/.agentv/assertions/both", "#!/bin/sh\ncat >/dev/null\necho '{\"score\": 0}'\n",
          executable=True)
    write(project / "evals/b.eval.yaml", "tests:\n  - {id: b, input: Hi, assert: [{type: both}]}\n")
    run_cli("run", "evals/b.eval.yaml", cwd=project)
    assert rows_by_id(project / RESULTS)["b"]["hits"] == ["python"]


def test_the_agentv_module_a_refusal_names_is_the_nearest_one(tmp_path: Path) -> None:
    """Only AgentV `.ts` modules for the type, in the suite's folder and at the root: the error points
    at the one AgentV itself would load, the nearest (in process, through the loader's finder)."""
    from agentv_gate.errors import EvalFileError
    from agentv_gate.loader.assertions import find_custom_assertion
    from agentv_gate.loader.refs import SearchRoots

    for folder in (tmp_path, tmp_path / "evals" / "deep"):
        write(folder / ".agentv/assertions/tone.ts", "export default 1\n")
    roots = SearchRoots(eval_dir=tmp_path / "evals" / "deep", repo_root=tmp_path)
    with pytest.raises(EvalFileError) as refused:
        find_custom_assertion("tone", roots, 6)
    assert f"{tmp_path / 'evals/deep/.agentv/assertions/tone.ts'}, a module" in str(refused.value)
