"""The cli target: a real shell command per case, prompt in, answer out, killed at its timeout."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.case_run import CaseRun
from agentv_gate.errors import ProviderError, TargetsConfigError
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.cli_target import CliProvider, parse_cli_output
from agentv_gate.targets.config import RawTarget, resolve_target
from agentv_gate.targets.registry import build_provider
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply

PY = sys.executable


def cli(tmp_path: Path, command: str, os_env: dict[str, str] | None = None, **extra: Any) -> CliProvider:
    agentv = tmp_path / ".agentv"
    agentv.mkdir(exist_ok=True)
    data = {"name": "agent", "provider": "cli", "command_template": command, "timeout_seconds": 10, **extra}
    config = resolve_target(RawTarget(name="agent", data=data, line=2), os_env or {}, agentv / "targets.yaml")
    provider = build_provider(config)
    assert isinstance(provider, CliProvider)
    return provider


def script(tmp_path: Path, body: str, name: str = "agent.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return f"{PY} {path}"


TRICKY = 'What\'s 2 + 2? Use "quotes", $HOME, `backticks` and ; rm -rf / -- safely.'


def test_prompt_placeholder_is_quoted_and_stdout_is_the_answer(tmp_path: Path) -> None:
    run = script(tmp_path, "import sys; print('echo: ' + sys.argv[1])")
    response = cli(tmp_path, f"{run} {{PROMPT}}").invoke(ProviderRequest(question=TRICKY, eval_case_id="c1"))
    assert response.text == f"echo: {TRICKY}"
    assert response.output_messages[-1].text() == response.text
    assert response.retries == 0 and response.duration_ms is not None


def test_prompt_arrives_on_stdin_and_in_prompt_file(tmp_path: Path) -> None:
    run = script(
        tmp_path,
        """
        import sys
        stdin = sys.stdin.read()
        from_file = open(sys.argv[1], encoding="utf-8").read()
        print(stdin == from_file, stdin)
    """,
    )
    response = cli(tmp_path, f"{run} {{PROMPT_FILE}}").invoke(ProviderRequest(question="héllo\nworld"))
    assert response.text == "True héllo\nworld"


def test_answer_from_output_file_with_agentv_json_schema(tmp_path: Path) -> None:
    run = script(
        tmp_path,
        """
        import json, sys
        out, eval_id, attempt = sys.argv[1], sys.argv[2], sys.argv[3]
        print("noise on stdout")
        json.dump({"output_messages": [{"role": "assistant", "content": "thinking",
                                        "tool_calls": [{"tool": "search", "input": {"q": "x"}}]},
                                       {"role": "assistant", "content": f"final for {eval_id}/{attempt}"}],
                   "token_usage": {"input": 3, "output": 4}, "cost_usd": 0.01, "duration_ms": 1234},
                  open(out, "w"))
    """,
    )
    provider = cli(tmp_path, f"{run} {{OUTPUT_FILE}} {{EVAL_ID}} {{ATTEMPT}}")
    response = provider.invoke(ProviderRequest(question="q", eval_case_id="case 7", attempt=2))
    assert response.text == "final for case 7/2"
    assert response.output_messages[0].model_extra["tool_calls"][0]["tool"] == "search"
    assert (response.token_usage, response.cost_usd, response.duration_ms) == ({"input": 3, "output": 4}, 0.01, 1234)


def test_missing_output_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match=r"exited 0 but wrote no \{OUTPUT_FILE\}"):
        cli(tmp_path, "true {OUTPUT_FILE}").invoke(ProviderRequest(question="q"))


def test_files_placeholder_and_format(tmp_path: Path) -> None:
    doc = tmp_path / "my doc.md"
    doc.write_text("x", encoding="utf-8")
    run = script(tmp_path, "import sys; print('|'.join(sys.argv[1:]))")
    provider = cli(tmp_path, f"{run} {{FILES}}", files_format="--file {path} --name {basename}")
    response = provider.invoke(ProviderRequest(question="q", input_files=[str(doc), str(doc)]))
    assert response.text == f"--file|{doc}|--name|my doc.md"


def test_nonzero_exit_reports_stderr_and_code(tmp_path: Path) -> None:
    run = script(tmp_path, "import sys; sys.stderr.write('model quota exceeded'); sys.exit(4)")
    with pytest.raises(ProviderError) as caught:
        cli(tmp_path, run).invoke(ProviderRequest(question="q"))
    assert "model quota exceeded" in str(caught.value) and "exited with code 4" in str(caught.value)
    assert str(caught.value).startswith("cli target 'agent':")


def test_timeout_kills_the_command(tmp_path: Path) -> None:
    run = script(tmp_path, "import time; time.sleep(30)")
    with pytest.raises(ProviderError, match=r"timed out after 0\.3s"):
        cli(tmp_path, run, timeout_seconds=0.3).invoke(ProviderRequest(question="q"))


def test_env_cwd_and_secret_redaction(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    run = script(
        tmp_path,
        """
        import os, sys
        sys.stderr.write("auth failed for token " + os.environ["AGENT_TOKEN"] + " in " + os.getcwd())
        sys.exit(1)
    """,
    )
    provider = cli(
        tmp_path, run, os_env={"TOKEN_VALUE": "tok-supersecret-42"}, cwd="work", env={"AGENT_TOKEN": "${{ TOKEN_VALUE }}"}
    )
    with pytest.raises(ProviderError) as caught:
        provider.invoke(ProviderRequest(question="q"))
    assert "tok-supersecret-42" not in str(caught.value) and "auth failed for token ***" in str(caught.value)
    assert str((tmp_path / "work").resolve()) in str(caught.value)


def test_cwd_defaults_to_the_eval_folder(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    response = cli(tmp_path, "pwd").invoke(ProviderRequest(question="q", run=CaseRun(eval_dir=str(evals))))
    assert Path(response.text).resolve() == evals.resolve()


def test_unknown_placeholder_and_missing_template_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(TargetsConfigError, match=r"unsupported placeholder '\{QUESTION\}'"):
        cli(tmp_path, "agent {QUESTION}")
    config = resolve_target(RawTarget(name="a", data={"name": "a", "provider": "cli"}), {})
    with pytest.raises(TargetsConfigError, match="command_template is required"):
        build_provider(config)
    with pytest.raises(TargetsConfigError, match="timeout_seconds must be a positive number"):
        cli(tmp_path, "true", timeout_seconds=0)


def test_command_healthcheck_runs_once_and_blocks_on_failure(tmp_path: Path) -> None:
    marker = tmp_path / "checks.log"
    check = script(tmp_path, f"open({str(marker)!r}, 'a').write('x'); import sys; sys.exit(0)", "check.py")
    provider = cli(tmp_path, "echo ok", healthcheck={"type": "command", "command_template": check})
    assert provider.invoke(ProviderRequest(question="a")).text == "ok"
    assert provider.invoke(ProviderRequest(question="b")).text == "ok"
    assert marker.read_text() == "x"
    failing = cli(tmp_path, "echo ok", healthcheck={"type": "command", "command_template": "exit 7"})
    with pytest.raises(ProviderError, match="healthcheck failed"):
        failing.invoke(ProviderRequest(question="a"))


def test_http_healthcheck(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue("/health", FakeReply(status=200, body=b"ok"))
    provider = cli(tmp_path, "echo up", healthcheck={"type": "http", "url": f"{fake_llm.url}/health"})
    assert provider.invoke(ProviderRequest(question="q")).text == "up"
    fake_llm.set_default("/down", FakeReply.error(404))
    down = cli(tmp_path, "echo up", healthcheck={"type": "http", "url": f"{fake_llm.url}/down"})
    with pytest.raises(ProviderError, match="healthcheck failed.*HTTP 404"):
        down.invoke(ProviderRequest(question="q"))


def test_parse_cli_output_keeps_plain_json_answers() -> None:
    answer = json.dumps({"invoice": {"total": 12}})
    text, messages, metrics = parse_cli_output(answer + "\n")
    assert text == answer and messages[0].text() == answer and metrics == {}
    text, _, _ = parse_cli_output('{"text": "hello", "cost_usd": 0.5}')
    assert text == "hello"


def test_the_agent_runs_in_the_environment_agentv_gate_was_given(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`python3 agent.py` is the user's python3 with PATH and every variable as received: nothing of
    agentv-gate's (its interpreter folder, the judges' SDK path) is put in front of the agent."""
    team_bin = tmp_path / "team-bin"
    team_bin.mkdir()
    (team_bin / "python3").symlink_to(PY)
    monkeypatch.setenv("PATH", f"{team_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setenv("TEAM_SETTING", "from the job")
    (tmp_path / "agent.py").write_text(
        "import json, os, sys\n"
        "print(json.dumps({'python': sys.executable, 'path': os.environ['PATH'],\n"
        "                  'pythonpath': os.environ.get('PYTHONPATH'), 'team': os.environ.get('TEAM_SETTING'),\n"
        "                  'extra': os.environ.get('EXTRA')}))\n")
    provider = cli(tmp_path, f"python3 {tmp_path / 'agent.py'}", env={"EXTRA": "from the target"})
    seen = json.loads(provider.invoke(ProviderRequest(question="q", eval_case_id="env")).text)
    assert seen == {"python": str(team_bin / "python3"), "path": os.environ["PATH"], "pythonpath": None,
                    "team": "from the job", "extra": "from the target"}


def test_agentv_2_8_spelling_command_and_healthcheck_told_apart_by_its_keys(tmp_path: Path) -> None:
    """AgentV 2.8+: `command:` (not `command_template:`), and `healthcheck: {command, cwd}` without `type:`,
    its relative `cwd` (like the target's) taken from the running case's eval-file folder."""
    evals = tmp_path / "evals"
    (evals / "tools").mkdir(parents=True)
    (evals / "work").mkdir()
    marker = tmp_path / "health.log"
    check = script(tmp_path, f"import os; open({str(marker)!r}, 'a').write(os.getcwd())", "check.py")
    data = {"name": "agent", "provider": "cli", "command": "pwd", "cwd": "./work",
            "healthcheck": {"command": check, "cwd": "./tools"}}
    provider = build_provider(resolve_target(RawTarget(name="agent", data=data, line=2), {},
                                             tmp_path / ".agentv" / "targets.yaml"))
    response = provider.invoke(ProviderRequest(question="q", run=CaseRun(eval_dir=str(evals))))
    assert Path(response.text).resolve() == (evals / "work").resolve()
    assert Path(marker.read_text()).resolve() == (evals / "tools").resolve()


def test_url_healthcheck_without_type(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default("/down", FakeReply.error(503))
        down = cli(tmp_path, "echo up", healthcheck={"url": f"{server.url}/down", "timeout_seconds": 5}, max_retries=0)
        with pytest.raises(ProviderError, match="healthcheck failed.*HTTP 503"):
            down.invoke(ProviderRequest(question="q"))


@pytest.mark.parametrize("healthcheck, message", [
    ({"cwd": "."}, "must have 'command' .* or 'url'"),
    ({"type": "tcp", "url": "x"}, "got type 'tcp'"),
    ("curl localhost", "must be a mapping"),
])
def test_a_healthcheck_that_is_neither_kind_is_a_config_error(tmp_path: Path, healthcheck: object, message: str) -> None:
    with pytest.raises(TargetsConfigError, match=message):
        cli(tmp_path, "echo ok", healthcheck=healthcheck)


@pytest.mark.parametrize("value", ["false", "no", 0])
def test_keep_temp_files_must_be_true_or_false(tmp_path: Path, value: object) -> None:
    # read as truthy, the text "false" kept every case's prompt file
    with pytest.raises(TargetsConfigError, match=f"keep_temp_files must be true or false, got {value!r}"):
        cli(tmp_path, "echo ok", keep_temp_files=value)


def test_command_must_be_a_command_line(tmp_path: Path) -> None:
    data = {"name": "a", "provider": "cli", "command": ["python3", "agent.py"]}
    with pytest.raises(TargetsConfigError, match="command must be a command line"):
        build_provider(resolve_target(RawTarget(name="a", data=data), {}))


def test_env_values_reach_the_agent_as_yaml_wrote_them(tmp_path: Path) -> None:
    # `DEBUG: true` is "true" to the agent, as a shell or AgentV's JavaScript writes it, not Python's "True";
    # a whole number written 2.0 is "2"; a list or an empty value has no text form and is refused.
    run = script(tmp_path, "import os; print(os.environ['A'], os.environ['B'], os.environ['C'], os.environ['D'], "
                           "os.environ['E'])")
    provider = cli(tmp_path, run, env={"A": True, "B": False, "C": 2.0, "D": 2.5, "E": 7})
    assert provider.invoke(ProviderRequest(question="q", eval_case_id="c1")).text == "true false 2 2.5 7"
    for value in ([1], None, {"x": 1}):
        with pytest.raises(TargetsConfigError, match=r"env\.BAD must be text, a number or true/false, got "):
            cli(tmp_path, "echo ok", env={"BAD": value})


@pytest.mark.parametrize("names_a_file", [False, True])
def test_the_temporary_folder_is_made_only_for_a_command_naming_its_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names_a_file: bool) -> None:
    # A command that names neither {PROMPT_FILE} nor {OUTPUT_FILE} cannot see the case's folder: none is made.
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    named = " # {PROMPT_FILE}" if names_a_file else ""
    response = cli(tmp_path, f'echo "[$(ls -A {scratch})]"{named}').invoke(
        ProviderRequest(question="q", eval_case_id="c1"))
    made = response.text.strip("[]\n")
    assert made.startswith("agentv-gate-cli-") if names_a_file else made == "", response.text
    assert not list(scratch.iterdir())  # removed after the case, as before
