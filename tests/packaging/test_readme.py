"""README examples that a user copies on their first day: taken from README.md itself and run, so they work as written."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.helpers.cli import run_cli
from tests.helpers.docs import DOCS
from tests.helpers.files import make_repo

ROOT = Path(__file__).resolve().parents[2]
README = DOCS  # the landing page and every page under docs/

AGENT = """\
import argparse, sys
if sys.argv[1:] == ["--selftest"]:  # the example's healthcheck
    sys.exit(0)
parser = argparse.ArgumentParser()
parser.add_argument("--prompt", required=True)
parser.add_argument("--out", required=True)
args = parser.parse_args()
with open(args.out, "w") as out:
    out.write("Paris is the capital of France." if "France" in args.prompt else "I do not know.")
"""

SUITE = """\
tests:
  - id: capital
    input: What is the capital of France?
    target: my-agent
    assertions: [{type: contains, value: Paris}]
"""


def yaml_blocks() -> list[object]:
    """Every ```yaml block of README.md that is a whole document (some show fragments)."""
    parsed = []
    for block in re.findall(r"```yaml\n(.*?)```", README, re.DOTALL):
        try:
            parsed.append(yaml.safe_load(block))
        except yaml.YAMLError:
            continue
    return parsed


def readme_cli_target() -> dict:
    for parsed in yaml_blocks():  # the Targets page's example, named as the suites it shows name it
        if isinstance(parsed, dict) and "targets" in parsed:
            for target in parsed["targets"]:
                if target.get("provider") == "cli" and target.get("name") == "my-agent":
                    return target
    raise AssertionError("the docs have no targets example with a cli target named my-agent")


def test_the_cli_target_example_states_its_working_folder() -> None:
    target = readme_cli_target()
    assert target["cwd"] == ".."
    assert "agent.py" in target["command"].split()[1]


def test_the_cli_target_example_runs_as_written(tmp_path: Path) -> None:
    """agent.py at the repository root, the suite in evals/, the target exactly as README.md shows it."""
    target = readme_cli_target()
    target.pop("judge_target")  # the example's judge is a model server; this suite only has a `contains`
    make_repo(tmp_path, yaml.safe_dump({"targets": [target]}))
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "evals" / "geo.eval.yaml").write_text(SUITE)
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


SUITE_INPUTS = r"(^|/)(evals|judges|prompts|\.agentv)/|(^|/)targets\.ya?ml$|\.eval\.(ya?ml|jsonl)$"
"""What the suites read: the narrowed `files:` of the all-suites hooks adds the agent's folder to it."""


def test_the_all_suites_hook_example_extends_the_hooks_default_files() -> None:
    """The all-suites hooks run on every commit (no `files:` of their own); the README's `files:`
    overrides name the agent's folder and everything the suites read, in the `repo:` form and in
    the `repo: local` form alike; the local form's hooks run what the published ones run."""
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    seen = set()
    for parsed in yaml_blocks():
        if not isinstance(parsed, dict) or "repos" not in parsed:
            continue
        local = parsed["repos"][0]["repo"] == "local"
        for hook in parsed["repos"][0]["hooks"]:
            if hook["id"].startswith("agentv-gate-all") and "files" in hook:
                assert "files" not in hooks[hook["id"]]
                assert hook["files"] == "^src/support_agent/|" + SUITE_INPUTS
                seen.add("local" if local else hook["id"])
            if local:
                published = hooks[hook["id"]]
                assert hook["language"] == "system"
                assert {k: hook[k] for k in ("entry", "exclude", "pass_filenames", "require_serial") if k in hook} == \
                    {k: published[k] for k in ("entry", "exclude", "pass_filenames", "require_serial") if k in hook}
    assert seen == {"local", "agentv-gate-all-system"}, seen


def test_the_readme_speaks_to_users_only() -> None:
    """No pointers into this project's own planning notes or into folders a user does not have."""
    assert not re.search(r"\bseed \d+|shared/spec|\.\./shared", README, re.IGNORECASE)


def test_the_not_yet_list_is_exactly_what_agentv_gate_refuses() -> None:
    """The README's list of AgentV features not run yet names every entry of `keys.py` and nothing
    implemented since: a user reads it to know whether their suite will run."""
    from agentv_gate.base.key_checks import NOT_YET, NOT_YET_EVALUATOR_TYPES, NOT_YET_PROVIDERS

    section = README.split("**AgentV features agentv-gate does not run yet**", 1)[1].split("**Deliberate differences**")[0]
    not_yet = section.split("They are exactly these:", 1)[1].split("Everything else AgentV 2.19 runs", 1)[0]
    names = {key for level in NOT_YET.values() for key in level} | set(NOT_YET_PROVIDERS) | set(NOT_YET_EVALUATOR_TYPES)
    assert {name for name in names if f"`{name}`" not in not_yet} == set()
    for implemented in ("rubrics", "required", "tool-trajectory", "latency", "gemini"):
        assert f"`{implemented}`" not in not_yet, implemented
