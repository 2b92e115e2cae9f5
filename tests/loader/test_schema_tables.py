"""The evaluator schema is data: each kind's rules on its config class, the loader's steps keyed by class.

A branch per kind in the loader (`kind == "code_judge"`, `isinstance(config, CodeJudgeConfig)`) is how
the 814-line hand-written schema grew; these tests make the next one a red test instead.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from agentv_gate.base.problems import Problem
from agentv_gate.loader import evaluator_parser
from agentv_gate.loader.evaluator_files import code_judge_files
from agentv_gate.loader.evaluator_written import Written
from agentv_gate.loader.refs import SearchRoots
from agentv_gate.models import EVALUATOR_CONFIG_CLASSES, EVALUATOR_KINDS, CodeJudgeConfig, LlmJudgeConfig, PromptScriptConfig

LOADER = Path(evaluator_parser.__file__).parent
CLASS_NAMES = "|".join(cls.__name__ for cls in EVALUATOR_CONFIG_CLASSES)
KINDS = "|".join(sorted({*EVALUATOR_KINDS, *evaluator_parser.TYPE_ALIASES, *evaluator_parser.CONTAINS_VARIANTS}))
KIND_BRANCH = re.compile(rf"\bkind\s*(==|!=|(not\s+)?in\s+\()[^#]*([\"']({KINDS})[\"']|CUSTOM_KIND)"
                         rf"|isinstance\([^)]*\b({CLASS_NAMES})\b|type\(\w+\) is \w+Config")
"""`kind == "contains"`, `kind in ("code_judge", CUSTOM_KIND)`, `isinstance(config, CodeJudgeConfig)`:
a branch on an evaluator kind (a message segment's `kind == "file"` is none)."""


def test_the_loader_branches_on_no_kind() -> None:
    found = [f"{path.relative_to(LOADER.parent.parent)}:{number}: {line.strip()}"
             for path in sorted(LOADER.glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if KIND_BRANCH.search(line)]
    assert not found, "a branch per kind in the loader (add a row to a table keyed by config class):\n" + "\n".join(found)


def test_parse_evaluator_is_its_steps() -> None:
    assert len(inspect.getsource(evaluator_parser.parse_evaluator).splitlines()) < 40
    assert not hasattr(evaluator_parser, "_check_settings")


@pytest.mark.parametrize("spelled, kind", [("code-grader", "code_judge"), ("llm_grader", "llm_judge"),
                                           ("is-valid-json", "is_json"), ("exact_match", "equals"),
                                           ("match", "regex"), ("Contains", "Contains")])
def test_type_spellings_come_from_the_classes(spelled: str, kind: str) -> None:
    assert evaluator_parser.normalise_kind(spelled) == kind


def test_each_class_reads_its_other_setting_names() -> None:
    judge = CodeJudgeConfig.model_validate({"name": "n", "command": ["python3", "j.py"], "timeout": 5})
    assert (judge.script, judge.timeout_seconds) == (["python3", "j.py"], 5)
    grader = LlmJudgeConfig.model_validate({"name": "n", "prompt": {"command": ["python3", "p.py"]}})
    assert isinstance(grader.prompt, PromptScriptConfig) and grader.prompt.script == ["python3", "p.py"]
    both = CodeJudgeConfig.model_validate({"name": "n", "script": "a", "command": "b"})
    assert both.script == "a", "with both names written the field's own name is read (the loader refuses the pair)"


def test_resolution_returns_a_copy(tmp_path: Path) -> None:
    script = tmp_path / "judge.py"
    script.write_text("print('{}')\n", encoding="utf-8")
    script.chmod(0o755)
    raw = {"name": "n", "type": "code_judge", "script": "judge.py"}
    problems: list[Problem] = []
    written = Written(raw, dict(raw), "code_judge", 3, tmp_path / "e.yaml", SearchRoots(tmp_path, tmp_path), problems,
                      lambda members: [])
    config = CodeJudgeConfig.model_validate(raw)
    resolved = code_judge_files(config, written)
    assert resolved.resolved_script == [str(script)]
    assert config.resolved_script is None, "the validated config was written into"



def test_every_judge_type_the_generations_list_is_read_as_its_kind() -> None:
    """The judges' type spellings are one list (base/generations.py): the config classes read them off it, so
    a spelling that decides a file's generation is never one the loader refuses as an unknown type."""
    from agentv_gate.base.generations import GENERATIONS

    for row in GENERATIONS.values():
        assert {evaluator_parser.normalise_kind(name) for name in row.code_types} == {"code_judge"}
        assert {evaluator_parser.normalise_kind(name) for name in row.llm_types} == {"llm_judge"}
