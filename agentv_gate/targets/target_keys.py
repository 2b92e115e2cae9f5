"""The keys a targets.yaml entry may hold, per provider, as the providers read them.

One table for the reader and the checker: `TargetConfig.get`/`require` and its `settings` refuse
(AssertionError, a bug of ours) to read a key the target's provider does not declare here, and
`parse_targets` reports every key no table declares, at its line, with a suggestion. So a key a
provider reads is always declared, and a declared key is never reported.
"""

from __future__ import annotations

COMMON_KEYS = ("name", "provider", "judge_target", "grader_target", "judgeTarget", "workers", "provider_batching",
               "providerBatching", "price_per_1k_input", "price_per_1k_output")
"""`price_per_1k_*` (usage.py) are agentv-gate's own: USD per 1,000 tokens, for a target whose provider reports
tokens but no cost."""

BATCHING_KEYS = ("provider_batching", "providerBatching")
"""AgentV's batch mode: `true` runs the agent once for every case, which agentv-gate does not do yet (refused as
a feature not run); `false`, AgentV's default, is read and changes nothing."""

CLI_LOG_KEYS = ("verbose", "cli_verbose", "cliVerbose")
"""A cli target's logging switch: AgentV prints the command it runs. It changes no answer and no score."""

RETRY_KEYS = (
    "max_retries", "maxRetries", "retry_initial_delay_ms", "retryInitialDelayMs", "retry_max_delay_ms",
    "retryMaxDelayMs", "retry_backoff_factor", "retryBackoffFactor", "retry_jitter_ms", "retryJitterMs",
    "retry_max_total_seconds", "retryMaxTotalSeconds", "retry_after_max_seconds", "retryAfterMaxSeconds",
    "request_timeout_seconds", "timeout_seconds", "timeoutSeconds", "retry_status_codes", "retryStatusCodes",
)
"""`retry_policy_from_settings` (targets/http_settings.py), for every HTTP provider."""

CAP_KEYS = ("max_response_bytes", "maxResponseBytes")
"""`response_byte_cap` (config.py): the cap on one answer, HTTP body or cli output."""

LIMIT_KEYS = ("max_rpm", "max_tpm")
"""`limits_from_settings` (targets/http_settings.py): a target's requests and tokens per minute (`workers` is common)."""

HTTP_CHAT_KEYS = (*RETRY_KEYS, *CAP_KEYS, *LIMIT_KEYS, "temperature", "max_output_tokens", "maxTokens",
                  "system_prompt", "systemPrompt",
                  "reasoning_effort", "reasoningEffort", "reasoning_model", "reasoningModel",
                  "structured_output", "structuredOutput")
"""`HttpChatProvider` (openai_compat.py), shared by openai, azure and anthropic."""

API_FORMAT_KEYS = ("api_format", "apiFormat")
"""AgentV 4.x's choice of OpenAI API on an `openai` target: `chat` (chat completions, what agentv-gate sends)
or `responses` (the Responses API, openai_responses.py). 4.42 refuses it on azure targets, 2.19 knows it nowhere."""

PROVIDER_KEYS: dict[str, frozenset[str]] = {
    "openai": frozenset({*COMMON_KEYS, *HTTP_CHAT_KEYS, "endpoint", "base_url", "baseUrl", "baseURL", "model",
                         "deployment", "variant", "api_key", "apiKey", "headers", *API_FORMAT_KEYS}),
    "azure": frozenset({*COMMON_KEYS, *HTTP_CHAT_KEYS, "endpoint", "resource", "resourceName", "resource_name",
                        "deployment", "deployment_name", "deploymentName", "model", "api_key", "apiKey", "version",
                        "api_version", "apiVersion"}),
    "anthropic": frozenset({*COMMON_KEYS, *HTTP_CHAT_KEYS, "base_url", "endpoint", "baseUrl", "api_key", "apiKey",
                            "model", "deployment", "variant", "anthropic_version", "anthropicVersion",
                            "thinking_budget", "thinkingBudget"}),
    "gemini": frozenset({*COMMON_KEYS, *HTTP_CHAT_KEYS, "base_url", "endpoint", "baseUrl", "baseURL", "api_key",
                         "apiKey", "model", "deployment", "variant"}),
    "mock": frozenset({*COMMON_KEYS, "response", "judge_response", "judgeResponse", "responses", "delay_ms",
                       "delayMs", "delay_min_ms", "delayMinMs", "delay_max_ms", "delayMaxMs"}),
    "cli": frozenset({*COMMON_KEYS, *RETRY_KEYS, *CAP_KEYS, "command", "command_template", "commandTemplate", "timeout_seconds",
                      "timeoutSeconds", "files_format", "filesFormat", "attachments_format", "attachmentsFormat",
                      "cwd", "env", "keep_temp_files", "keepTempFiles", "keep_output_files", "keepOutputFiles",
                      "healthcheck", *CLI_LOG_KEYS}),
}
"""provider (normalised) -> every key its provider module reads (a cli target: retry keys for its http healthcheck)."""

ANY_PROVIDER_KEYS = frozenset().union(*PROVIDER_KEYS.values())
"""For an entry whose `provider` comes from the environment: known until the provider is."""

HEALTHCHECK_KEYS = frozenset({"type", "command", "command_template", "commandTemplate", "cwd", "url",
                              "timeout_seconds", "timeoutSeconds"})
"""A cli target's `healthcheck:` mapping."""

RETRY_SPELLINGS = (
    ("max_retries", "maxRetries"), ("retry_initial_delay_ms", "retryInitialDelayMs"),
    ("retry_max_delay_ms", "retryMaxDelayMs"), ("retry_backoff_factor", "retryBackoffFactor"),
    ("retry_jitter_ms", "retryJitterMs"), ("retry_max_total_seconds", "retryMaxTotalSeconds"),
    ("retry_after_max_seconds", "retryAfterMaxSeconds"), ("retry_status_codes", "retryStatusCodes"),
)
HTTP_CHAT_SPELLINGS = (
    *RETRY_SPELLINGS, ("request_timeout_seconds", "timeout_seconds", "timeoutSeconds"),
    ("max_response_bytes", "maxResponseBytes"), ("max_output_tokens", "maxTokens"),
    ("system_prompt", "systemPrompt"), ("reasoning_effort", "reasoningEffort"),
    ("reasoning_model", "reasoningModel"), ("structured_output", "structuredOutput"), ("api_key", "apiKey"),
)
SPELLINGS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai": (*HTTP_CHAT_SPELLINGS, ("endpoint", "base_url", "baseUrl", "baseURL"), ("model", "deployment", "variant"),
               API_FORMAT_KEYS),
    "azure": (*HTTP_CHAT_SPELLINGS, ("endpoint", "resource", "resourceName", "resource_name"),
              ("deployment", "deployment_name", "deploymentName"), ("version", "api_version", "apiVersion")),
    "anthropic": (*HTTP_CHAT_SPELLINGS, ("base_url", "endpoint", "baseUrl"), ("model", "deployment", "variant"),
                  ("anthropic_version", "anthropicVersion"), ("thinking_budget", "thinkingBudget")),
    "gemini": (*HTTP_CHAT_SPELLINGS, ("base_url", "endpoint", "baseUrl", "baseURL"), ("model", "deployment", "variant")),
    "mock": (("judge_response", "judgeResponse"), ("delay_ms", "delayMs"), ("delay_min_ms", "delayMinMs"),
             ("delay_max_ms", "delayMaxMs")),
    "cli": (*RETRY_SPELLINGS, ("max_response_bytes", "maxResponseBytes"),
            ("command", "command_template", "commandTemplate"), ("timeout_seconds", "timeoutSeconds"),
            ("files_format", "filesFormat", "attachments_format", "attachmentsFormat"),
            ("keep_temp_files", "keepTempFiles", "keep_output_files", "keepOutputFiles"), CLI_LOG_KEYS),
}
"""provider -> the spellings of each of its settings, in the order the provider reads them (`TargetConfig.get`):
only the first one written is read, so another one beside it is refused. `judge_target`'s are COMMON_SPELLINGS."""
COMMON_SPELLINGS = (("judge_target", "grader_target", "judgeTarget"), BATCHING_KEYS)
HEALTHCHECK_SPELLINGS = (("command", "command_template", "commandTemplate"), ("timeout_seconds", "timeoutSeconds"))
MOCK_RULE_SPELLINGS = (("id", "eval_id", "case_id"),)
MOCK_DELAY_RANGE = ("delay_min_ms", "delayMinMs", "delay_max_ms", "delayMaxMs")
"""A mock's delay range: when given (> 0), it picks the delay and `delay_ms` is not read (as in AgentV's mock)."""

HEALTHCHECK_KEYS_BY_KIND: dict[str, frozenset[str]] = {
    "command": frozenset({"type", "command", "command_template", "commandTemplate", "cwd", "timeout_seconds",
                          "timeoutSeconds"}),
    "http": frozenset({"type", "url", "timeout_seconds", "timeoutSeconds"}),
}
"""What each kind of healthcheck reads (cli_target.py): a key only the other kind reads is refused."""

CLI_HEALTHCHECK_RETRY_KEYS = tuple(key for key in RETRY_KEYS if key not in (
    "timeout_seconds", "timeoutSeconds", "request_timeout_seconds"))
"""A cli target's retry keys: read by its http healthcheck only (the command itself is never retried)."""

CLI_UNREAD_KEYS = ("request_timeout_seconds",)
"""Retry keys a cli target never reads: its command's timeout is `timeout_seconds`, its
healthcheck's `healthcheck.timeout_seconds` (which replaces the request timeout of the http check)."""

FILES_FORMAT_KEYS = ("files_format", "filesFormat", "attachments_format", "attachmentsFormat")
"""Read only to fill a cli command's `{FILES}`."""

MOCK_RULE_KEYS = frozenset({"id", "eval_id", "case_id", "regex", "contains", "response", "judge_response"})
"""One entry of a mock target's `responses:` list."""
