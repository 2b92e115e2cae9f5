"""Every provider kind, once: where its class lives, its other names, whether it judges, whether it caches.

`config.py` reads ALIASES to normalise `provider:`, `registry.py` builds from PROVIDERS, `cache.py`
asks `.cacheable`. Adding a provider is a module and one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Provider
    from .config import TargetConfig


@dataclass(frozen=True)
class ProviderKind:
    module: str
    """Imported on first use, so a run of mock targets never imports requests."""
    cls: str
    aliases: tuple[str, ...] = ()
    """Other spellings users write in `provider:` (AgentV's and the local servers' names)."""
    judges: bool = True
    """It answers a prompt with model text, so it can be a `judge_target` (a cli agent cannot)."""
    cacheable: bool = True
    """Its answer is a function of the request (not the agent under test, not a free mock)."""

    def build(self, target: TargetConfig) -> Provider:
        factory: Any = getattr(importlib.import_module(self.module, __package__), self.cls)
        provider: Provider = factory(target)
        return provider


PROVIDERS: dict[str, ProviderKind] = {
    "openai": ProviderKind(".openai_responses", "openai_provider", aliases=(
        "openai-compatible", "openai_compatible", "vllm", "ollama", "llama.cpp", "llamacpp", "llama-cpp", "lmstudio")),
    "azure": ProviderKind(".azure", "AzureOpenAIProvider", aliases=("azure-openai", "azure_openai")),
    "anthropic": ProviderKind(".anthropic", "AnthropicProvider"),
    "gemini": ProviderKind(".gemini", "GeminiProvider", aliases=("google", "google-gemini", "google_gemini")),
    "mock": ProviderKind(".mock", "MockProvider", cacheable=False),
    "cli": ProviderKind(".cli_target", "CliProvider", judges=False, cacheable=False),
}
"""Kind name (what `TargetConfig.provider` holds once normalised) -> how to build and treat it."""

ALIASES: dict[str, str] = {name: kind for kind, spec in PROVIDERS.items() for name in (kind, *spec.aliases)}
"""Every accepted `provider:` spelling (lower case) -> its kind, each kind's own name first."""
