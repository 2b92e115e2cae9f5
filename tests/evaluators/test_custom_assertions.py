"""Custom assertion types: `type: <name>` runs `.agentv/assertions/<name>.py` (or an executable) as a code judge."""

from __future__ import annotations

import os
import shutil
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
    assert results["short"]["type"] == "word-count"  # a sign-less file: 4.42 reports the own type name
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


WORD_COUNT_MODULE = """\
// what AgentV's word-count example does, without the SDK: the code-judge payload in, its reply out
import { readFileSync } from "node:fs";
const payload = JSON.parse(readFileSync(0, "utf8"));
const answer = typeof payload.output === "string" ? payload.output : payload.answer;  // 4.x : 2.x
const words = answer.trim().split(/\\s+/).length;
const pass = words >= 3;
console.log(JSON.stringify({score: pass ? 1 : Math.min(words / 3, 0.9), hits: [], misses: [],
                            reasoning: `${words} words, output is ${typeof payload.output}`}));
"""

BUN_SHIM = """#!/bin/sh
# `bun run MODULE`, as AgentV runs an assertion module; node stands in for bun here
[ "$1" = run ] && shift
exec node "$@"
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the stand-in for bun")
def test_an_agentv_assertion_module_runs_with_bun_as_agentv_runs_it(project: Path, tmp_path: Path) -> None:
    """AgentV 2.19 registers `.agentv/assertions/<type>.ts` (`.js`, `.mts`, `.mjs`) as a code judge run
    with `bun run <module>` (its sdk-custom-assertion example): the gate runs it the same way, and such
    a module wins over the gate's own `<type>.py`, even a nearer one, since AgentV runs the module.
    In a 4.x file it gets 4.42's code-grader payload (`output` is the answer's text), as 4.42 sends it."""
    write(project / ".agentv/assertions/word-count.mjs", WORD_COUNT_MODULE)
    write(project / "evals/deep/.agentv/assertions/word-count.py", GRADES.format(score=0, where="python"))
    write(project / "evals/deep/suite.eval.yaml", """
        tests:
          - {id: capital, input: Capital of France?, assert: [{type: word-count}]}
    """)
    # a file with no sign is read as 4.42; this one says it is written for 2.19, as a migrating team would
    write(project / ".agentv/gate.yaml", """
        agentv:
          overrides:
            - {paths: [evals/deep/suite.eval.yaml], version: "2.19"}
    """)
    write(project / "evals/deep/four.eval.yaml", """
        execution: {workers: 1}   # a 4.x form: AgentV 4.42 runs the module as a code grader (4.x payload)
        tests:
          - {id: four, input: Capital of France?, assert: [{type: word-count}]}
    """)
    write(project / "evals/deep/listed.eval.yaml", """
        tests:   # `assertions:` is read by AgentV 3.0+ only (its sdk-custom-assertion example in 4.42)
          - {id: listed, input: Capital of France?, assertions: [{type: word-count}]}
    """)
    shims = write(tmp_path / "shims/bun", BUN_SHIM, executable=True).parent
    proc = run_cli("run", "evals", cwd=project, env={"PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = rows_by_id(project / RESULTS)["listed"]
    assert listed["reasoning"] == "word-count: 6 words, output is string", listed
    row = rows_by_id(project / RESULTS)["capital"]
    module = (project / ".agentv/assertions/word-count.mjs").resolve()
    assert row["score"] == 1.0 and row["reasoning"] == "word-count: 6 words, output is object", row
    four = rows_by_id(project / RESULTS)["four"]
    assert four["score"] == 1.0 and four["reasoning"] == "word-count: 6 words, output is string", four
    assert row["evaluator_raw_request"]["script"] == ["bun", "run", str(module)]


def test_a_4x_files_custom_assertion_is_reported_by_its_own_type_name_as_4_42_reports_it(project: Path) -> None:
    """4.42 writes a suite's own assertion type as the result's type (`word-count`, its sdk-custom-assertion
    example); 2.19's rows (a file pinned to it) keep `custom-assertion`."""
    write_suite(project, "- {type: word-count, max_words: 10}")
    run_cli("run", "evals/deep", cwd=project)
    assert [e["type"] for e in rows_by_id(project / RESULTS)["capital"]["scores"]] == ["word-count"]
    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')
    run_cli("run", "evals/deep", cwd=project)
    assert [e["type"] for e in rows_by_id(project / RESULTS)["capital"]["scores"]] == ["custom-assertion"]
