"""targets.yaml: AgentV's schema, ${{ VAR }} interpolation, located errors, secrets kept out of sight."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.models import EvalCase, EvaluationContext, LlmJudgeConfig
from agentv_gate.targets.anthropic import AnthropicProvider
from agentv_gate.targets.azure import AzureOpenAIProvider
from agentv_gate.targets.cli_target import CliProvider
from agentv_gate.targets.config import RawTarget, declared_secrets, parse_targets
from agentv_gate.targets.mock import MockProvider
from agentv_gate.targets.openai_compat import OpenAICompatProvider
from agentv_gate.targets.registry import ProviderRegistry, build_provider, find_targets_file, load_targets
from agentv_gate.targets.settings import AzureSettings

AGENTV_FILE = """\
$schema: agentv-targets-v2.2
targets:
  - name: azure_base
    provider: azure
    endpoint: ${{ AZURE_OPENAI_ENDPOINT }}
    api_key: ${{ AZURE_OPENAI_API_KEY }}
    model: ${{ AZURE_DEPLOYMENT_NAME }}
    version: ${{ AZURE_OPENAI_API_VERSION }}
    judge_target: claude

  - name: claude
    provider: anthropic
    api_key: ${{ ANTHROPIC_API_KEY }}
    model: claude-sonnet-4
    temperature: 0

  - name: local
    provider: vllm
    base_url: http://${{ VLLM_HOST }}:8000
    model: qwen

  - name: agent
    provider: cli
    command_template: python agent.py --prompt {PROMPT} --out {OUTPUT_FILE}
    timeout_seconds: 30

  - name: offline
    provider: mock
    response: "42"
"""

ENV = {
    "AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com",
    "AZURE_OPENAI_API_KEY": "azure-key-abcdef123456",
    "AZURE_DEPLOYMENT_NAME": "gpt-4o",
    "ANTHROPIC_API_KEY": "sk-ant-9876543210",
    "VLLM_HOST": "gpu-box",
}


def test_agentv_targets_file_resolves_every_provider() -> None:
    config = parse_targets(AGENTV_FILE, Path("/repo/.agentv/targets.yaml"))
    assert config.names() == ["azure_base", "claude", "local", "agent", "offline"]
    kinds = {name: type(build_provider(config.resolve(name, ENV))) for name in config.names()}
    assert kinds == {
        "azure_base": AzureOpenAIProvider,
        "claude": AnthropicProvider,
        "local": OpenAICompatProvider,
        "agent": CliProvider,
        "offline": MockProvider,
    }
    azure = config.resolve("azure_base", ENV)
    assert azure.provider == "azure" and azure.judge_target == "claude"
    assert azure.read(AzureSettings).endpoint == "https://example.openai.azure.com"
    assert "version" not in azure.settings  # unset optional variable: as if not written
    local = build_provider(config.resolve("local", ENV))
    assert isinstance(local, OpenAICompatProvider) and local.base_url == "http://gpu-box:8000/v1"


def test_a_provider_cannot_read_a_setting_its_provider_does_not_declare() -> None:
    """The settings a provider reads are the ones its model in targets/settings.py declares, so none is reported
    as unknown."""
    offline = parse_targets(AGENTV_FILE).resolve("offline", ENV)
    assert offline.settings.get("response") == "42"
    with pytest.raises(AssertionError, match="a provider reads undeclared key 'endpoint': add it to its settings model in "
                                               "targets/settings.py"):
        offline.settings.get("endpoint")
    with pytest.raises(AssertionError, match="undeclared key 'endpoint'"):
        assert "endpoint" in offline.settings


def test_secrets_are_redacted_everywhere() -> None:
    config = parse_targets(AGENTV_FILE)
    azure = config.resolve("azure_base", ENV)
    assert azure.secrets == {"azure-key-abcdef123456"}
    assert "azure-key-abcdef123456" not in repr(azure)
    assert azure.safe_settings()["api_key"] == "***"
    assert azure.redact("boom: azure-key-abcdef123456!") == "boom: ***!"


def test_unset_required_variable_names_the_variable() -> None:
    config = parse_targets(AGENTV_FILE, Path("t.yaml"))
    env = {k: v for k, v in ENV.items() if k != "ANTHROPIC_API_KEY"}
    target = config.resolve("claude", env)  # resolving is fine; using it is not
    with pytest.raises(TargetsConfigError) as caught:
        build_provider(target)
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message and "api_key" in message and "claude" in message
    assert message.startswith("t.yaml:11:")


def test_embedded_reference_to_unset_variable_is_recorded_with_the_others() -> None:
    """Resolving notes every unset variable, an embedded one too, so the preflight (which refuses a
    target with any) names them all at once, where resolving used to stop at the first."""
    config = parse_targets(AGENTV_FILE)
    target = config.resolve("local", {})
    assert target.unset_env["base_url"] == ("VLLM_HOST",)
    assert "base_url" not in target.settings  # never a half-resolved `http://:8000`


def test_empty_variable_counts_as_unset() -> None:
    config = parse_targets(AGENTV_FILE)
    with pytest.raises(TargetsConfigError, match="ANTHROPIC_API_KEY"):
        build_provider(config.resolve("claude", {**ENV, "ANTHROPIC_API_KEY": "  "}))


def test_literal_secret_is_refused() -> None:
    text = "targets:\n  - name: t\n    provider: openai\n    model: m\n    api_key: sk-literal-key-in-git\n"
    config = parse_targets(text, Path("f.yaml"))
    with pytest.raises(TargetsConfigError) as caught:
        config.resolve("t", {})
    assert "api_key must use ${{ VARIABLE_NAME }}" in str(caught.value)
    assert "sk-literal-key-in-git" not in str(caught.value)
    assert str(caught.value).startswith("f.yaml:2:")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "targets:\n  - name: a\n    provider: mock\n  - name: a\n    provider: mock\n",
            r"f\.yaml:4: duplicate target name 'a' \(first at line 2\)",
        ),
        ("targets:\n  - provider: mock\n", r"targets\[0\]: 'name' is required"),
        ("targets:\n  - name: a\n", r"target 'a': 'provider' is required"),
        ("name: a\n", r"missing 'targets' list"),
        ("targets: nope\n", r"'targets' must be a list"),
        ("targets:\n  - [1, 2]\n", r"targets\[0\] must be a mapping"),
        ("targets:\n  - name: a\n   provider: mock\n", r"f\.yaml:3: not valid YAML"),
    ],
)
def test_malformed_files_give_located_errors(text: str, expected: str) -> None:
    with pytest.raises(TargetsConfigError, match=expected):
        parse_targets(text, Path("f.yaml"))


NEVER_READ = "is never read: '{first}' (line {line}) is written too, and only the first of {names} is read"
AZURE_DEPLOYMENT = "deployment, deployment_name, deploymentName, model"


@pytest.mark.parametrize(("entry", "line", "message"), [
    # two spellings of one setting: the provider reads the first one written
    ("provider: openai\n    model: m\n    endpoint: http://a/v1\n    base_url: http://b/v1",
     6, "'base_url' in target 'a' " + NEVER_READ.format(first="endpoint", line=5,
                                                        names="endpoint, base_url, baseUrl, baseURL")),
    ("provider: openai\n    model: m\n    timeout_seconds: 5\n    request_timeout_seconds: 9",
     5, "'timeout_seconds' in target 'a' " + NEVER_READ.format(
         first="request_timeout_seconds", line=6, names="request_timeout_seconds, timeout_seconds, timeoutSeconds")),
    ("provider: azure\n    endpoint: http://a\n    deployment: d\n    deploymentName: e\n    api_key: ${{ K }}",
     6, "'deploymentName' in target 'a' " + NEVER_READ.format(
         first="deployment", line=5, names=AZURE_DEPLOYMENT)),
    # AgentV reads an azure deployment as `deployment ?? deploymentName ?? model`: `model` is refused beside
    # `deployment` as `deploymentName` is, never read as a second setting
    ("provider: azure\n    endpoint: http://a\n    deployment: d\n    model: gpt-5-mini\n    api_key: ${{ K }}",
     6, "'model' in target 'a' " + NEVER_READ.format(first="deployment", line=5, names=AZURE_DEPLOYMENT)),
    ("provider: mock\n    judge_target: j\n    judgeTarget: k",
     5, "'judgeTarget' in target 'a' " + NEVER_READ.format(
         first="judge_target", line=4, names="judge_target, grader_target, judgeTarget")),
    ("provider: cli\n    command: echo a\n    command_template: echo b",
     5, "'command_template' in target 'a' " + NEVER_READ.format(
         first="command", line=4, names="command, command_template, commandTemplate")),
    ("provider: cli\n    command: echo a\n    healthcheck:\n      command: 'true'\n      commandTemplate: 'false'",
     7, "'commandTemplate' in the healthcheck of target 'a' " + NEVER_READ.format(
         first="command", line=6, names="command, command_template, commandTemplate")),
    ("provider: mock\n    responses:\n      - {id: x, case_id: y, response: r}",
     5, "'case_id' in responses[0] of target 'a' " + NEVER_READ.format(first="id", line=5,
                                                                        names="id, eval_id, case_id")),
    # a setting another one replaces: a delay range wins over delay_ms (as in AgentV's mock), and
    # Anthropic's extended thinking takes no temperature
    ("provider: mock\n    delay_ms: 50\n    delay_max_ms: 10",
     4, "'delay_ms' in target 'a' is never read: delay_min_ms/delay_max_ms (line 5) pick the delay instead"),
    ("provider: anthropic\n    model: m\n    api_key: ${{ K }}\n    thinking_budget: 2048\n    temperature: 0",
     7, "'temperature' in target 'a' is never sent: with thinking_budget (line 6), Anthropic's extended "
        "thinking takes no temperature"),
    ("provider: anthropic\n    model: m\n    api_key: ${{ K }}\n    structured_output: false",
     6, "'structured_output' in target 'a' is never read: an anthropic target sends no reply schema (its "
        "judges ask for their JSON in the prompt)"),
], ids=["base_url", "timeout_seconds", "deploymentName", "azure-model", "judgeTarget", "command_template", "healthcheck",
        "mock-rule", "delay_ms", "temperature", "structured_output"])
def test_a_setting_another_one_replaces_is_located(entry: str, line: int, message: str) -> None:
    problems = parse_targets(f"targets:\n  - name: a\n    {entry}\n", Path("t.yaml")).key_problems
    assert [(p.line, p.message) for p in problems] == [(line, message)]


def test_top_level_keys_other_than_targets_are_located() -> None:
    # a global `judge_target` or `defaults:` reads as settings for every target, and no target read them
    text = "$schema: agentv-targets-v2.2\njudge_target: judge\ndefaults:\n  max_retries: 0\ntargets:\n  - name: a\n" \
           "    provider: mock\n"
    problems = parse_targets(text, Path("t.yaml")).key_problems
    assert [(p.line, p.message, p.unknown_key) for p in problems] == [
        (2, "unknown key 'judge_target' at the top of targets.yaml (a target's settings go in its entry)", True),
        (3, "unknown key 'defaults' at the top of targets.yaml (a target's settings go in its entry)", True),
    ]


def test_a_spelling_read_when_the_first_one_is_unset_is_no_problem() -> None:
    # `endpoint: ${{ URL }}` left unset falls back to base_url: both may be read
    text = "targets:\n  - name: a\n    provider: openai\n    model: m\n    endpoint: ${{ URL }}\n    base_url: http://b\n"
    assert parse_targets(text, Path("t.yaml")).key_problems == []


def test_an_unknown_provider_is_kept_with_its_refusal_for_the_preflight() -> None:
    """AgentV 4.42 looks an unknown provider up as a custom provider script: whether that is a typo is the
    preflight's to say, which knows the eval files and which targets a run uses; resolving it still fails."""
    config = parse_targets("targets:\n  - name: a\n    provider: gemini-pro\n", Path("f.yaml"))
    problem = config.unknown_providers["a"]
    assert (str(problem.file), problem.line) == ("f.yaml", 2)
    assert problem.message.startswith("target 'a': unsupported provider 'gemini-pro'")
    with pytest.raises(TargetsConfigError, match="unsupported provider 'gemini-pro'"):
        config.resolve("a", {})


def test_provider_from_environment_and_aliases() -> None:
    config = parse_targets("targets:\n  - name: a\n    provider: ${{ KIND }}\n    response: hi\n")
    assert config.resolve("a", {"KIND": "MOCK"}).provider == "mock"
    with pytest.raises(TargetsConfigError, match="'provider' is required"):
        config.resolve("a", {})
    with pytest.raises(TargetsConfigError, match="unsupported provider 'nope'"):
        config.resolve("a", {"KIND": "nope"})


def test_unknown_target_lists_the_known_ones() -> None:
    with pytest.raises(TargetsConfigError, match=r"no target named 'x' \(targets defined: azure_base, claude"):
        parse_targets(AGENTV_FILE).resolve("x", ENV)


def test_bad_numbers_and_retry_settings_are_config_errors() -> None:
    text = "targets:\n  - name: a\n    provider: openai\n    model: m\n    temperature: hot\n"
    with pytest.raises(TargetsConfigError, match="temperature must be a number"):
        build_provider(parse_targets(text).resolve("a", {}))
    text = "targets:\n  - name: a\n    provider: openai\n    model: m\n    max_retries: -1\n"
    with pytest.raises(TargetsConfigError, match="max_retries must be a non-negative number"):
        build_provider(parse_targets(text).resolve("a", {}))
    text = "targets:\n  - name: a\n    provider: mock\n    workers: 0\n"
    with pytest.raises(TargetsConfigError, match="workers must be a whole number"):
        parse_targets(text).resolve("a", {})


def test_load_and_find_targets_file(tmp_path: Path) -> None:
    (tmp_path / ".agentv").mkdir()
    path = tmp_path / ".agentv" / "targets.yaml"
    path.write_text(AGENTV_FILE, encoding="utf-8")
    nested = tmp_path / "evals" / "deep"
    nested.mkdir(parents=True)
    assert find_targets_file(nested, stop_at=tmp_path) == path
    assert find_targets_file(nested) is None  # no git, not under the working folder: the root is its own folder
    assert find_targets_file(nested, stop_at=nested) is None
    config = load_targets(path)
    assert config.resolve("agent", ENV).repo_root == tmp_path.resolve()
    with pytest.raises(TargetsConfigError, match="cannot read targets file"):
        load_targets(tmp_path / "missing.yaml")


# ---------------------------------------------------------------- who judges


def _context(target: str, evaluator: LlmJudgeConfig | None = None) -> EvaluationContext:
    case = EvalCase(id="c", source_file=Path("e.yaml"), suite="e.yaml", question="q")
    return EvaluationContext(eval_case=case, candidate="a", evaluator=evaluator or LlmJudgeConfig(name="j"), target=target)


def test_judge_resolution_order() -> None:
    registry = ProviderRegistry(parse_targets(AGENTV_FILE), ENV)
    resolve = registry.judge_resolver()
    assert resolve(_context("azure_base")).name == "claude"  # judge_target
    assert resolve(_context("offline")).name == "offline"  # a model judges itself
    assert resolve(_context("agent")) is None  # a cli agent does not
    named = LlmJudgeConfig(name="j", target="offline")
    assert resolve(_context("agent", named)).name == "offline"  # evaluator's own target wins
    assert registry.provider("claude") is registry.provider("claude")  # built once


def test_undefined_judge_target_is_an_error() -> None:
    text = "targets:\n  - name: a\n    provider: mock\n    judge_target: ghost\n"
    registry = ProviderRegistry(parse_targets(text), {})
    with pytest.raises(TargetsConfigError, match="judge_target 'ghost' is not defined"):
        registry.judge_resolver()(_context("a"))


def test_which_fields_count_as_secrets() -> None:
    from agentv_gate.redaction import is_secret_field

    secret = ["api_key", "apiKey", "github_token", "client_secret", "password", "OPENAI_API_KEY"]
    plain = ["max_tokens", "max_output_tokens", "key_path", "tokenizer", "model", "endpoint"]
    assert [k for k in secret + plain if is_secret_field(k)] == secret


def test_declared_secrets_are_found_without_resolving_the_target() -> None:
    """What a target names as secret, read from its raw entry (an unused target is never resolved):
    not the text of a `${{ VAR }}` written as a URL's password, nor a variable with a plain name."""
    raw = RawTarget("t", {"endpoint": "http://u:${{PW}}@h/", "base_url": "http://u:lit3ral@h",
                          "command": "agent --key ${{ MY_TOKEN }} --host ${{ HOST }}",
                          "env": {"A_KEY": "${{ V }}", "PLAIN": "${{ W }}"}, "headers": {"X": "Bearer ${{ H }}"},
                          "api_key": "${{ K }}"})
    env = {"PW": "pw12345", "MY_TOKEN": "tok12345", "HOST": "host", "V": "vvvvvv", "W": "wwwwww", "H": "hhhhhh",
           "K": "kkkkkk"}
    assert declared_secrets(raw, env) == {"lit3ral", "tok12345", "vvvvvv", "hhhhhh", "kkkkkk"}
