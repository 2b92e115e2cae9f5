"""`use_target`: a target that runs another, as AgentV 4.42.4 resolves it, through the real CLI.

AgentV's own repository-root targets.yaml makes `default`, `agent`, `llm` and `grader` switches
(`use_target: ${{ AGENT_TARGET }}`): the variable names the target that runs, whose settings are used
whole. The chain is resolved before anything is called; each refusal is AgentV's message at the
delegating entry's line. AgentV's CLI follows at most 5 steps for the target a run names (`resolveUseTarget`),
its core 9 for any other (`resolveDelegatedTargetDefinition`, depth 10): both limits measured with AgentV 4.42.4.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.git import commit_all
from tests.helpers.reports import RESULTS, read_rows

PARIS = "The capital is Paris."
SECRET = "sk-usetarget-SECRET-0123456789"
VERDICT = '{"score": 1.0, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."}'
SWITCH = "targets:\n  - name: default\n    use_target: ${{ AGENT_TARGET }}\n"
MOCK = f'  - name: m\n    provider: mock\n    response: "{PARIS}"\n'
CASE = """
tests:
  - id: paris
    input: Capital of France?
    assertions:
      - {type: contains, value: Paris}
"""
GRADED = """
tests:
  - id: paris
    input: Capital of France?
    criteria: names Paris
    assertions:
      - {type: llm-grader}
"""


def _openai(name: str, url: str, extra: str = "") -> str:
    return (f"  - name: {name}\n    provider: openai\n    base_url: {url}/{name}\n"
            f"    api_key: ${{{{ USE_TARGET_KEY }}}}\n    model: m-{name}\n    max_retries: 0\n{extra}")


def _repo(root: Path, targets: str, suite: str = CASE) -> Path:
    make_repo(root, targets)
    write(root / "evals" / "a.eval.yaml", suite)
    return root


def _chain(first: str, hops: int, end: str) -> str:
    """Entries `first` -> `first_1` -> ... taking `hops` use_target steps to `end`."""
    names = [first, *(f"{first}_{i}" for i in range(1, hops))]
    return "".join(f"  - name: {n}\n    use_target: {names[i + 1] if i + 1 < hops else end}\n"
                   for i, n in enumerate(names))


def test_a_switch_runs_the_mock_its_variable_names_and_rows_carry_that_target(tmp_path: Path) -> None:
    repo = _repo(tmp_path, SWITCH + MOCK + '  - name: rome\n    provider: mock\n    response: "Rome."\n')
    done = run_cli("run", "evals", cwd=repo, env={"AGENT_TARGET": "m"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert [row["target"] for row in read_rows(repo / RESULTS)] == ["m"]  # as AgentV's index.jsonl: the concrete name
    done = run_cli("run", "evals", cwd=repo, env={"AGENT_TARGET": " rome "})  # trimmed, as AgentV trims it
    assert done.returncode == 1, done.stdout + done.stderr
    assert [row["target"] for row in read_rows(repo / RESULTS)] == ["rome"]


def test_a_switch_to_an_openai_target_on_loopback_uses_its_settings_and_hides_its_key(
        tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.set_default("/llm/v1/chat/completions", FakeReply.openai(f"{PARIS} key {SECRET}"))
    targets = ("targets:\n  - name: default\n    use_target: ${{ AGENT_TARGET }}\n    model: ignored-model\n"
               + _openai("llm", fake_llm.url))
    repo = _repo(tmp_path, targets)
    done = run_cli("run", "evals", "-v", cwd=repo, env={"AGENT_TARGET": "llm", "USE_TARGET_KEY": SECRET})
    assert done.returncode == 0, done.stdout + done.stderr
    [request] = fake_llm.requests_for("/llm/v1/chat/completions")
    assert request.json["model"] == "m-llm"  # the concrete target's settings, whole
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in done.stdout + done.stderr + (repo / RESULTS).read_text(encoding="utf-8")
    # the delegating entry's own model is read by nothing: said at its line
    assert ".agentv/targets.yaml:4: warning: 'model' has no effect here: target 'default' has use_target" in done.stderr


def test_a_chain_of_two_resolves_to_the_end(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "targets:\n" + _chain("default", 2, "m") + MOCK)
    done = run_cli("run", "evals", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [row["target"] for row in read_rows(repo / RESULTS)] == ["m"]


@pytest.mark.parametrize("hops, ok", [(5, True), (6, False)])
def test_the_target_a_run_names_follows_at_most_5_steps_as_agentv_s_cli(tmp_path: Path, hops: int, ok: bool) -> None:
    repo = _repo(tmp_path, "targets:\n" + _chain("default", hops, "m") + MOCK)
    done = run_cli("run", "evals", cwd=repo)
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
        return
    assert done.returncode == 2, done.stdout + done.stderr
    assert ('.agentv/targets.yaml:3: Target "default" exceeded the maximum use_target resolution depth (5 steps '
            "for the target a run names") in done.stderr
    assert not (repo / RESULTS).exists()


@pytest.mark.parametrize("hops, ok", [(9, True), (10, False)])
def test_a_grader_target_follows_at_most_9_steps_as_agentv_s_core(tmp_path: Path, fake_llm: FakeLLMServer,
                                                                  hops: int, ok: bool) -> None:
    fake_llm.set_default("/judge/v1/chat/completions", FakeReply.openai(VERDICT))
    targets = ("targets:\n" + MOCK.replace("  - name: m\n", "  - name: default\n") + "    grader_target: g\n"
               + _chain("g", hops, "judge") + _openai("judge", fake_llm.url))
    repo = _repo(tmp_path, targets, GRADED)
    done = run_cli("run", "evals", cwd=repo, env={"USE_TARGET_KEY": SECRET})
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(fake_llm.requests_for("/judge/v1/chat/completions")) == 1
        return
    assert done.returncode == 2, done.stdout + done.stderr
    assert ('.agentv/targets.yaml:7: Target "g" exceeded the maximum use_target resolution depth (10). '
            "Check for a delegation loop or overly deep alias chain.") in done.stderr
    assert fake_llm.requests == []  # refused before any call


def test_a_grader_switch_resolves_by_its_variable(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV's root layout: an agent with `grader_target: grader`, `grader` a `${{ GRADER_TARGET }}` switch."""
    fake_llm.set_default("/judge/v1/chat/completions", FakeReply.openai(VERDICT))
    targets = (SWITCH + MOCK + "    grader_target: grader\n  - name: grader\n    use_target: ${{ GRADER_TARGET }}\n"
               + _openai("judge", fake_llm.url))
    repo = _repo(tmp_path, targets, GRADED)
    env = {"AGENT_TARGET": "m", "GRADER_TARGET": "judge", "USE_TARGET_KEY": SECRET}
    done = run_cli("run", "evals", cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert fake_llm.requests_for("/judge/v1/chat/completions")[0].json["model"] == "m-judge"
    del env["GRADER_TARGET"]
    done = run_cli("run", "evals", cwd=repo, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert ('.agentv/targets.yaml:9: Target "grader" uses use_target: ${{ GRADER_TARGET }}, but GRADER_TARGET is '
            'not set. Set GRADER_TARGET to the name of a concrete target (for example, "azure") before running the '
            "eval.") in done.stderr


@pytest.mark.parametrize("env", [{}, {"AGENT_TARGET": "  "}], ids=["unset", "blank"])
def test_an_unset_or_blank_switch_is_refused_before_any_call_in_agentv_s_words(tmp_path: Path,
                                                                              env: dict[str, str]) -> None:
    repo = _repo(tmp_path, SWITCH + MOCK)
    done = run_cli("run", "evals", cwd=repo, env=env, drop=("AGENT_TARGET",))
    assert done.returncode == 2, done.stdout + done.stderr
    assert ('.agentv/targets.yaml:3: Target "default" uses use_target: ${{ AGENT_TARGET }}, but AGENT_TARGET is not '
            "set.") in done.stderr
    assert not (repo / RESULTS).exists()
    # offline, validate names the variable `run` needs, as for any unset ${{ VAR }}
    done = run_cli("validate", "evals", cwd=repo, env=env, drop=("AGENT_TARGET",))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not set here, needed by `run`: AGENT_TARGET (target(s) default)" in done.stdout + done.stderr
    assert run_cli("validate", "--require-env", "evals", cwd=repo, env=env, drop=("AGENT_TARGET",)).returncode == 1
    # --skip-missing-env: its cases are listed as not run, naming the variable
    done = run_cli("run", "evals", "--skip-missing-env", cwd=repo, env=env, drop=("AGENT_TARGET",))
    assert done.returncode == 5, done.stdout + done.stderr
    [row] = read_rows(repo / RESULTS)
    assert "not run" in row["error"] and "AGENT_TARGET is not set" in row["error"]


def test_a_name_no_target_has_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    repo = _repo(tmp_path, SWITCH + MOCK + '  - name: mock-paris\n    use_target: mm\n')
    done = run_cli("run", "evals", cwd=repo, env={"AGENT_TARGET": "n"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert ('.agentv/targets.yaml:3: Target "default" uses use_target: ${{ AGENT_TARGET }}, which resolved to "n", '
            'but no target named "n" exists.') in done.stderr
    done = run_cli("run", "evals", cwd=repo, env={"AGENT_TARGET": "mock-paris"})
    assert ('.agentv/targets.yaml:8: Target "mock-paris" uses use_target: "mm", but no target named "mm" exists. '
            "(did you mean 'm'?)") in done.stderr


def test_a_cycle_is_refused_naming_the_chain(tmp_path: Path) -> None:
    repo = _repo(tmp_path, SWITCH + MOCK + "  - name: a\n    use_target: b\n  - name: b\n    use_target: a\n")
    done = run_cli("run", "evals", cwd=repo, env={"AGENT_TARGET": "a"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert ".agentv/targets.yaml:3: Circular use_target reference detected: default -> a -> b -> a" in done.stderr


def test_an_unused_switch_that_cannot_resolve_is_a_warning_at_its_line(tmp_path: Path) -> None:
    """AgentV's root targets.yaml: `llm` and `grader` switches whose variables a run on `default` need not set."""
    targets = (SWITCH + MOCK + "  - name: llm\n    use_target: ${{ LLM_TARGET }}\n"
               "  - name: loop\n    use_target: loop\n")
    repo = _repo(tmp_path, targets)
    for command in ("run", "validate"):
        done = run_cli(command, "evals", cwd=repo, env={"AGENT_TARGET": "m"}, drop=("LLM_TARGET",))
        assert done.returncode == 0, done.stdout + done.stderr
        text = done.stdout + done.stderr
        assert ('.agentv/targets.yaml:8: warning: Target "llm" uses use_target: ${{ LLM_TARGET }}, but LLM_TARGET is '
                "not set.") in text
        assert ".agentv/targets.yaml:10: warning: Circular use_target reference detected: loop -> loop" in text
        assert "(unused here; a run that uses target 'loop' is refused)" in text
    assert read_rows(repo / RESULTS)[0]["verdict"] == "pass"


def test_agentv_s_own_root_targets_file_runs_with_its_switches_set(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """AgentV 4.42.4's repository-root targets.yaml, as a team copies it: `default` -> AGENT_TARGET -> openai."""
    root = Path(__file__).resolve().parents[3] / "shared" / "agentv" / "root-agentv-4.42.4" / "targets.yaml"
    if not root.is_file():
        pytest.skip("AgentV's root targets.yaml is not beside the project")
    fake_llm.set_default("/v1/chat/completions", FakeReply.openai(PARIS))
    repo = _repo(tmp_path, root.read_text(encoding="utf-8"))
    env = {"AGENT_TARGET": "openai", "OPENAI_ENDPOINT": fake_llm.url, "OPENAI_API_KEY": SECRET,
           "OPENAI_MODEL": "gpt-4.1-mini"}
    done = run_cli("run", "evals", cwd=repo, env=env, drop=("LLM_TARGET", "GRADER_TARGET"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [row["target"] for row in read_rows(repo / RESULTS)] == ["openai"]
    assert SECRET not in done.stdout + done.stderr


def test_a_switch_records_and_replays_with_the_server_stopped(tmp_path: Path) -> None:
    """A replay fills unset keys with placeholders, never an unset switch: which target runs is the run's to say."""
    with FakeLLMServer() as server:
        server.set_default("/llm/v1/chat/completions", FakeReply.openai(PARIS))
        repo = _repo(tmp_path, SWITCH + _openai("llm", server.url))
        commit_all(repo)
        done = run_cli("run", "evals", "--record", "rec", cwd=repo, env={"AGENT_TARGET": "llm", "USE_TARGET_KEY": SECRET})
        assert done.returncode == 0, done.stdout + done.stderr
    done = run_cli("run", "evals", "--replay", "rec", cwd=repo, env={"AGENT_TARGET": "llm"}, drop=("USE_TARGET_KEY",))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [row["target"] for row in read_rows(repo / RESULTS)] == ["llm"]
    done = run_cli("run", "evals", "--replay", "rec", cwd=repo, drop=("USE_TARGET_KEY", "AGENT_TARGET"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'Target "default" uses use_target: ${{ AGENT_TARGET }}, but AGENT_TARGET is not set.' in done.stderr


def test_an_llm_grader_s_own_target_may_be_a_switch(tmp_path: Path) -> None:
    grader = '  - name: g\n    provider: mock\n    response: \'{"score": 1, "hits": [], "misses": [], "reasoning": "ok"}\'\n'
    targets = (MOCK.replace("  - name: m\n", "targets:\n  - name: default\n")
               + "  - name: grader\n    use_target: ${{ GRADER_TARGET }}\n" + grader)
    repo = _repo(tmp_path, targets, GRADED.replace("{type: llm-grader}", "{type: llm-grader, target: grader}"))
    assert run_cli("run", "evals", cwd=repo, env={"GRADER_TARGET": "g"}).returncode == 0
    done = run_cli("run", "evals", cwd=repo, drop=("GRADER_TARGET",))
    assert done.returncode == 2, done.stdout + done.stderr
    assert '.agentv/targets.yaml:6: Target "grader" uses use_target: ${{ GRADER_TARGET }}, but' in done.stderr


def test_a_use_target_that_is_not_text_is_refused_only_when_a_run_uses_it(tmp_path: Path) -> None:
    """AgentV's schema reads `use_target` as text when it resolves the target: an unused one stops nothing."""
    repo = _repo(tmp_path, "targets:\n" + MOCK.replace("  - name: m\n", "  - name: default\n")
                 + "  - name: bad\n    provider: mock\n    use_target: 5\n")
    done = run_cli("run", "evals", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ".agentv/targets.yaml:7: warning: target 'bad': use_target must be a target's name (text), got 5" in done.stderr
    done = run_cli("run", "evals", "--target", "bad", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert ".agentv/targets.yaml:7: target 'bad': use_target must be a target's name (text), got 5" in done.stderr
