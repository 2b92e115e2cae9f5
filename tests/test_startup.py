"""What `agentv-gate run` loads before its first case: only what every run needs.

Every CI job pays the gate's start-up once, and a suite of `cli` targets and code judges pays nothing
else of ours; what only some runs use (HTTP, a baseline, JUnit's writer, the evaluator kinds a suite
does not name, their schemas) is imported or built when first used. Checked in a fresh interpreter,
by what it holds, never by a clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

NOT_AT_START = ("requests", "urllib3", "tenacity", "junit_xml", "agentv_gate.report.baseline.paired",
                "agentv_gate.report.baseline.render", "agentv_gate.evaluators.composite",
                "agentv_gate.evaluators.field_accuracy", "agentv_gate.evaluators.tool_trajectory",
                "agentv_gate.evaluators.llm_judge")


def _fresh(code: str, cwd: Path | None = None) -> object:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                          check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_run_command_loads_no_optional_dependency() -> None:
    loaded = _fresh(f"""
        import json, sys
        import agentv_gate.commands.run
        print(json.dumps([name for name in {NOT_AT_START!r} if name in sys.modules]))
    """)
    assert loaded == []


def test_importing_the_run_command_builds_no_evaluator_config_schema() -> None:
    built = _fresh("""
        import json
        import agentv_gate.commands.run
        from agentv_gate.models import EVALUATOR_CONFIG_CLASSES
        print(json.dumps([c.__name__ for c in EVALUATOR_CONFIG_CLASSES if c.__pydantic_complete__]))
    """)
    assert built == []


def test_a_code_judge_suite_builds_the_schema_of_its_kind_only(tmp_path: Path) -> None:
    """Loading validates each entry with its kind's class: the other kinds' schemas are never built, and a
    case holding the configs does not build them either."""
    (tmp_path / "suite.eval.yaml").write_text(
        "tests:\n  - id: c\n    input: hi\n    assert:\n      - {name: k, type: code_judge, script: [python3, j.py]}\n")
    (tmp_path / "j.py").write_text("print('{}')\n")
    built = _fresh("""
        import json
        from pathlib import Path
        from agentv_gate.loader.suite import load_eval_file
        from agentv_gate.models import EVALUATOR_CONFIG_CLASSES
        result = load_eval_file(Path("suite.eval.yaml").resolve(), repo_root=Path.cwd())
        assert not result.problems and len(result.cases) == 1, result.problems
        result.cases[0].model_dump()
        print(json.dumps([c.__name__ for c in EVALUATOR_CONFIG_CLASSES if c.__pydantic_complete__]))
    """, cwd=tmp_path)
    assert built == ["CodeJudgeConfig"]
