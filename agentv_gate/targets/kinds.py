"""Every provider kind, once: where its class lives, its other names, its settings, its own checks,
whether it judges, whether it caches.

`config.py` reads ALIASES to normalise `provider:` and checks each entry against its kind's `settings`
model and `checks` (target_checks.py), `registry.py` builds from PROVIDERS, `cache.py` asks
`.cacheable`. Adding a provider is a module, a settings model and one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import target_checks
from .settings import (
    AgentvSettings,
    AnthropicSettings,
    AzureSettings,
    ClaudeCliSettings,
    CliSettings,
    CopilotCliSettings,
    GeminiSettings,
    MockSettings,
    OpenAISettings,
    ReplaySettings,
)

if TYPE_CHECKING:
    from .base import Provider
    from .config import TargetConfig
    from .settings import ProviderSettings


@dataclass(frozen=True)
class ProviderKind:
    module: str
    """Imported on first use, so a run of mock targets never imports requests."""
    cls: str
    settings: type[ProviderSettings]
    """Every setting its provider reads, with its spellings (settings.py): any other key is refused."""
    aliases: tuple[str, ...] = ()
    """Other spellings users write in `provider:` (AgentV's and the local servers' names)."""
    judges: bool = True
    """It answers a prompt with model text, so it can be a `judge_target` (a cli agent cannot)."""
    cacheable: bool = True
    """Its answer is a function of the request (not the agent under test, not a free mock)."""
    reports_cost: bool = False
    """Its answers may carry a `cost_usd` of their own (a cli agent that prints one)."""
    reports_tokens: bool = True
    """Its answers carry token counts, which `price_per_1k_*` turns into a cost (a mock's carry none)."""
    batches: bool = False
    """`provider_batching: true` is run (one agent run answers every case); elsewhere it has no effect."""
    nested: tuple[target_checks.Check, ...] = ()
    """The checks of the mappings inside an entry (a healthcheck, a mock's rules), run first."""
    checks: tuple[target_checks.Check, ...] = ()
    """What only this provider refuses, beside what every entry is checked for."""

    def build(self, target: TargetConfig) -> Provider:
        factory: Any = getattr(importlib.import_module(self.module, __package__), self.cls)
        provider: Provider = factory(target)
        return provider


PROVIDERS: dict[str, ProviderKind] = {
    "openai": ProviderKind(".openai_responses", "openai_provider", OpenAISettings, aliases=(
        "openai-compatible", "openai_compatible", "vllm", "ollama", "llama.cpp", "llamacpp", "llama-cpp", "lmstudio"),
        checks=(target_checks.openai_api_format,)),
    "azure": ProviderKind(".azure", "AzureOpenAIProvider", AzureSettings, aliases=("azure-openai", "azure_openai")),
    "anthropic": ProviderKind(".anthropic", "AnthropicProvider", AnthropicSettings, checks=(target_checks.anthropic_replaced,)),
    "gemini": ProviderKind(".gemini", "GeminiProvider", GeminiSettings,
                           aliases=("google", "google-gemini", "google_gemini")),
    "agentv": ProviderKind(".agentv_target", "AgentvProvider", AgentvSettings, cacheable=False),
    "mock": ProviderKind(".mock", "MockProvider", MockSettings, cacheable=False, reports_tokens=False,
                         nested=(target_checks.mock_rule_keys,),
                         checks=(target_checks.mock_delay_range,)),
    "cli": ProviderKind(".cli_target", "CliProvider", CliSettings, judges=False, cacheable=False, reports_cost=True,
                        batches=True,
                        nested=(target_checks.healthcheck_keys,),
                        checks=(target_checks.cli_batching_with_files, target_checks.cli_unread_keys)),
    "claude-cli": ProviderKind(".claude_cli", "ClaudeCliProvider", ClaudeCliSettings, judges=False, cacheable=False,
                               reports_cost=True),
    "copilot-cli": ProviderKind(".copilot_cli", "CopilotCliProvider", CopilotCliSettings, aliases=("copilot",),
                                judges=False, cacheable=False, reports_cost=True),
    "replay": ProviderKind(".replay", "ReplayProvider", ReplaySettings, judges=False, cacheable=False,
                           reports_cost=True),
}
"""Kind name (what `TargetConfig.provider` holds once normalised) -> how to build and treat it."""

ALIASES: dict[str, str] = {name: kind for kind, spec in PROVIDERS.items() for name in (kind, *spec.aliases)}
"""Every accepted `provider:` spelling (lower case) -> its kind, each kind's own name first."""
