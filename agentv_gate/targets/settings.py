"""Each provider's targets.yaml settings as one model: every setting a field, its spellings on the field, once.

AgentV reads most settings under several names (snake_case and camelCase, `endpoint`/`base_url`, an
older name beside a newer one) and reads the first one written in its own order. A field declares
those names in that order (`setting("endpoint", "base_url", "baseUrl", "baseURL")`), and everything
else is derived from the declaration: the keys a provider knows (a key no model declares is refused
at its line), the second spelling beside a first one (refused: it would never be read), and the
value the provider reads (`ProviderSettings.read`). A setting AgentV accepts and never acts on is
declared too, with `ignored=` saying why: a located warning, never a refusal.

Values are checked by the providers that read them (each names the setting and its target), so a
field holds the value as written, `${{ VAR }}` resolved. `kinds.py` names each kind's model.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr


def setting(*spellings: str, ignored: str | None = None, switch: bool = False, ms: float | None = None) -> Any:
    """A field read from the first of `spellings` that is set. `ignored`: AgentV accepts it and nothing
    reads it (why, for the warning). `switch`: AgentV's schema takes only true or false. `ms`: a duration,
    and how many milliseconds one unit of it is (bounded where it is written: target_checks.py)."""
    extra: dict[str, Any] = {"ignored": ignored, "switch": switch, "ms": ms}
    return Field(default=None, validation_alias=AliasChoices(*spellings), json_schema_extra=extra)


S = TypeVar("S", bound="Settings")


class Settings(BaseModel):
    """A mapping of targets.yaml as fields, each read from its spellings; subclasses declare the fields."""

    # defer_build: settings are read with `model_construct` (see `read`), never validated, so the schema of
    # each of the dozen provider models is built only if something validates one (tens of ms at start-up).
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True, defer_build=True)

    _read_from: dict[str, str] = PrivateAttr(default_factory=dict)

    @classmethod
    def spellings(cls, field: str) -> tuple[str, ...]:
        """The names `field` is read from, in the order they are read."""
        return _spellings(cls)[field]

    @classmethod
    def every_spelling(cls) -> tuple[tuple[str, ...], ...]:
        """Each field's spellings, in declaration order."""
        return tuple(_spellings(cls).values())

    @classmethod
    def keys(cls) -> frozenset[str]:
        """Every key this model reads: the keys a target of its provider may hold."""
        return frozenset(key for names in cls.every_spelling() for key in names)

    @classmethod
    def _extra(cls, field: str, what: str) -> Any:
        extra = cls.model_fields[field].json_schema_extra
        return extra.get(what) if isinstance(extra, dict) else None

    @classmethod
    def ignored(cls) -> dict[str, str]:
        """Every spelling of a setting AgentV accepts and nothing reads -> why."""
        return {key: str(cls._extra(field, "ignored")) for field in cls.model_fields
                if cls._extra(field, "ignored") for key in cls.spellings(field)}

    @classmethod
    def switches(cls) -> tuple[str, ...]:
        """Every spelling of an on/off setting (only true or false, as AgentV's schema takes)."""
        return tuple(key for field in cls.model_fields if cls._extra(field, "switch") for key in cls.spellings(field))

    @classmethod
    def durations(cls) -> dict[str, float]:
        """Every spelling of a duration -> how many ms one unit of it is."""
        return {key: float(cls._extra(field, "ms")) for field in cls.model_fields if cls._extra(field, "ms")
                for key in cls.spellings(field)}

    @classmethod
    def read(cls: type[S], settings: Mapping[str, Any]) -> S:
        """The settings as this model: each field from the first of its spellings that is set (YAML null
        and an empty value are unset, so a later spelling is read then)."""
        values: dict[str, Any] = {}
        read_from: dict[str, str] = {}
        for field, names in _spellings(cls).items():
            for key in names:
                value = settings.get(key)
                if value is not None and value != "":
                    values[field], read_from[field] = value, key
                    break
        model = cls.model_construct(**values)  # the values as written: the providers check them
        model._read_from.update(read_from)
        return model

    def key_of(self, field: str) -> str:
        """The spelling `field` was read from (its first when unset): for messages about its value."""
        return self._read_from.get(field, self.spellings(field)[0])


@functools.cache
def _spellings(model: type[Settings]) -> dict[str, tuple[str, ...]]:
    """Each field of `model` -> its spellings, once per model (reading a target's settings is on every build)."""
    found: dict[str, tuple[str, ...]] = {}
    for field, info in model.model_fields.items():
        alias = info.validation_alias
        assert isinstance(alias, AliasChoices), f"{model.__name__}.{field} is declared without setting()"
        found[field] = tuple(str(choice) for choice in alias.choices)
    return found


class ProviderSettings(Settings):
    """What every target has, whatever its provider (`name`, `provider`, the judge, workers, prices)."""

    name: Any = setting("name")
    provider: Any = setting("provider")
    judge_target: Any = setting("judge_target", "grader_target", "judgeTarget")
    use_target: Any = setting("use_target")
    """The target an entry runs instead (config.py `TargetsConfig.concrete`); empty, it is ignored, as in AgentV."""
    workers: Any = setting("workers")
    provider_batching: Any = setting("provider_batching", "providerBatching", switch=True)
    """AgentV's batch mode: run on a cli target (cli_batch.py); elsewhere a no-effect warning."""
    price_per_1k_input: Any = setting("price_per_1k_input")
    """agentv-gate's own: USD per 1,000 tokens, for a target whose provider reports tokens but no cost."""
    price_per_1k_output: Any = setting("price_per_1k_output")
    subagent_mode_allowed: Any = setting(
        "subagent_mode_allowed", ignored="AgentV 4.42 reads it only in its subagent mode, which the gate never runs")


class RetrySettings(Settings):
    """`retry_policy_from_settings` (http_settings.py): for every HTTP provider and a cli target's http healthcheck."""

    max_retries: Any = setting("max_retries", "maxRetries")
    retry_initial_delay_ms: Any = setting("retry_initial_delay_ms", "retryInitialDelayMs", ms=1.0)
    retry_max_delay_ms: Any = setting("retry_max_delay_ms", "retryMaxDelayMs", ms=1.0)
    retry_backoff_factor: Any = setting("retry_backoff_factor", "retryBackoffFactor")
    retry_jitter_ms: Any = setting("retry_jitter_ms", "retryJitterMs", ms=1.0)
    retry_max_total_seconds: Any = setting("retry_max_total_seconds", "retryMaxTotalSeconds", ms=1000.0)
    retry_after_max_seconds: Any = setting("retry_after_max_seconds", "retryAfterMaxSeconds", ms=1000.0)
    retry_status_codes: Any = setting("retry_status_codes", "retryStatusCodes")
    max_response_bytes: Any = setting("max_response_bytes", "maxResponseBytes")
    """`response_byte_cap` (config.py): the cap on one answer, HTTP body or cli output."""


class RetryPolicySettings(RetrySettings):
    """The keys `retry_policy_from_settings` reads, alone: for a plain mapping of them (tests, a healthcheck)."""

    request_timeout_seconds: Any = setting("request_timeout_seconds", "timeout_seconds", "timeoutSeconds", ms=1000.0)


class HttpChatSettings(RetryPolicySettings, ProviderSettings):
    """`HttpChatProvider` (openai_compat.py), shared by openai, azure, anthropic and gemini."""

    max_rpm: Any = setting("max_rpm")
    """`limits_from_settings` (http_settings.py): requests per minute (`workers` is common)."""
    max_tpm: Any = setting("max_tpm")
    temperature: Any = setting("temperature")
    max_output_tokens: Any = setting("max_output_tokens", "maxTokens")
    system_prompt: Any = setting("system_prompt", "systemPrompt")
    reasoning_effort: Any = setting("reasoning_effort", "reasoningEffort")
    reasoning_model: Any = setting("reasoning_model", "reasoningModel")
    structured_output: Any = setting("structured_output", "structuredOutput")
    api_key: Any = setting("api_key", "apiKey")


class OpenAISettings(HttpChatSettings):
    endpoint: Any = setting("endpoint", "base_url", "baseUrl", "baseURL")
    model: Any = setting("model", "deployment", "variant")
    headers: Any = setting("headers")
    api_format: Any = setting("api_format", "apiFormat")
    """AgentV 4.x's choice of OpenAI API: `chat` (what agentv-gate sends) or `responses` (refused: not run yet)."""


class AzureSettings(HttpChatSettings):
    endpoint: Any = setting("endpoint", "resource", "resourceName", "resource_name")
    deployment: Any = setting("deployment", "deployment_name", "deploymentName", "model")
    """AgentV reads `deployment ?? deploymentName ?? model` (2.19; 4.42 `deployment ?? model`): `model` is
    the deployment when no other name is written, and never read beside one."""
    version: Any = setting("version", "api_version", "apiVersion")


class AnthropicSettings(HttpChatSettings):
    endpoint: Any = setting("base_url", "endpoint", "baseUrl")
    model: Any = setting("model", "deployment", "variant")
    anthropic_version: Any = setting("anthropic_version", "anthropicVersion")
    thinking_budget: Any = setting("thinking_budget", "thinkingBudget")


class GeminiSettings(HttpChatSettings):
    endpoint: Any = setting("base_url", "endpoint", "baseUrl", "baseURL")
    model: Any = setting("model", "deployment", "variant")


class AgentvSettings(RetrySettings, ProviderSettings):
    """AgentV 4.x's `agentv` provider (agentv_target.py): `model` as `provider:model`, `temperature`."""

    model: Any = setting("model")
    temperature: Any = setting("temperature")
    endpoint: Any = setting("base_url", "endpoint", "baseUrl", "baseURL")
    """agentv-gate's own: where the calls go (AgentV always calls the provider's public API)."""
    request_timeout_seconds: Any = setting("request_timeout_seconds", "timeout_seconds", "timeoutSeconds", ms=1000.0)
    max_rpm: Any = setting("max_rpm")
    max_tpm: Any = setting("max_tpm")


class MockSettings(ProviderSettings):
    response: Any = setting("response")
    judge_response: Any = setting("judge_response", "judgeResponse")
    responses: Any = setting("responses")
    delay_ms: Any = setting("delay_ms", "delayMs", ms=1.0)
    delay_min_ms: Any = setting("delay_min_ms", "delayMinMs", ms=1.0)
    """A delay range: when given (> 0), it picks the delay and `delay_ms` is not read (as in AgentV's mock)."""
    delay_max_ms: Any = setting("delay_max_ms", "delayMaxMs", ms=1.0)
    trace: Any = setting("trace", ignored="AgentV 4.42's mock accepts it and answers without it")


class CliSettings(RetrySettings, ProviderSettings):
    command: Any = setting("command", "command_template", "commandTemplate")
    timeout_seconds: Any = setting("timeout_seconds", "timeoutSeconds", ms=1000.0)
    request_timeout_seconds: Any = setting("request_timeout_seconds", ms=1000.0)
    """Known only to say where it belongs: a cli target does not read it (CLI_UNREAD_KEYS)."""
    files_format: Any = setting("files_format", "filesFormat", "attachments_format", "attachmentsFormat")
    cwd: Any = setting("cwd")
    env: Any = setting("env")
    keep_temp_files: Any = setting("keep_temp_files", "keepTempFiles", "keep_output_files", "keepOutputFiles")
    healthcheck: Any = setting("healthcheck")
    verbose: Any = setting("verbose", "cli_verbose", "cliVerbose", switch=True)
    """AgentV prints the command it runs: read, changes no answer and no score."""


class _AgentCliSettings(ProviderSettings):
    """What AgentV 4.42's two agent CLIs (`copilot-cli`, `claude-cli`) both read, spelt alike."""

    executable: Any = setting("executable", "command", "binary")
    model: Any = setting("model")
    cwd: Any = setting("cwd")
    timeout_seconds: Any = setting("timeout_seconds", ms=1000.0)
    stream_log: Any = setting("stream_log")
    """AgentV's stream log of the session (`raw`, `summary`, false): checked, and no log is written here."""
    log_dir: Any = setting("log_dir", "log_directory")
    log_format: Any = setting("log_format", "log_output_format")


class CopilotCliSettings(_AgentCliSettings):
    """AgentV 4.42's `copilot-cli` agent (targets/copilot_cli.py), its spellings as `resolveCopilotCliConfig` reads them."""

    args: Any = setting("args", "arguments")
    system_prompt: Any = setting("system_prompt")
    base_url: Any = setting("base_url")
    """A model provider of the team's own, with the keys below: Copilot's `COPILOT_PROVIDER_*` variables."""
    subprovider: Any = setting("subprovider")
    api_key: Any = setting("api_key")
    bearer_token: Any = setting("bearer_token")
    api_version: Any = setting("api_version")
    api_format: Any = setting("api_format")


class ClaudeCliSettings(_AgentCliSettings):
    """AgentV 4.42's `claude-cli` agent (targets/claude_cli.py), its spellings as `resolveClaudeConfig` reads them."""

    max_turns: Any = setting("max_turns")
    bypass_permissions: Any = setting("bypass_permissions")
    system_prompt: Any = setting("system_prompt", ignored="AgentV 4.42's claude-cli reads it and never sends it")
    max_budget_usd: Any = setting("max_budget_usd", ignored="AgentV 4.42's claude-cli reads it and never sends it")
    max_response_bytes: Any = setting("max_response_bytes", "maxResponseBytes")
    """agentv-gate's own cap on the CLI's stream of events (default 8 MiB): past it, the case is an error."""


class ReplaySettings(ProviderSettings):
    """AgentV 4.x's `replay`: answers from recorded target outputs (targets/replay.py)."""

    fixtures: Any = setting("fixtures")
    execution_traces: Any = setting("execution_traces")
    source_target: Any = setting("source_target")
    suite: Any = setting("suite")
    eval_path: Any = setting("eval_path")
    variant: Any = setting("variant")


class HealthcheckSettings(Settings):
    """A cli target's `healthcheck:` mapping (cli_target.py)."""

    type: Any = setting("type")
    command: Any = setting("command", "command_template", "commandTemplate")
    cwd: Any = setting("cwd")
    url: Any = setting("url")
    timeout_seconds: Any = setting("timeout_seconds", "timeoutSeconds", ms=1000.0)


class MockRuleSettings(Settings):
    """One entry of a mock target's `responses:` list."""

    id: Any = setting("id", "eval_id", "case_id")
    regex: Any = setting("regex")
    contains: Any = setting("contains")
    response: Any = setting("response")
    judge_response: Any = setting("judge_response")
