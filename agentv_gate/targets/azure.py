"""Azure OpenAI chat completions, addressed by deployment.

Keys as AgentV resolves them: endpoint `endpoint ?? resource ?? resourceName` (a full URL, or
a bare resource name meaning https://<name>.openai.azure.com), key `api_key ?? apiKey` (sent as
the `api-key` header), deployment `deployment ?? deployment_name ?? deploymentName ?? model`,
API version `version ?? api_version` (default 2024-12-01-preview; a leading `api-version=` is
stripped), plus `temperature`, `max_output_tokens`, `system_prompt` and the retry keys.

The URL is `<endpoint>/openai/deployments/<deployment>/chat/completions?api-version=<version>`,
as the AI SDK builds it with deployment-based URLs. The deployment decides the model, so a
judge's `model:` override is not applied here.
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import quote

from ..models import TargetResponse
from .base import ProviderRequest
from .config import TargetConfig
from .openai_compat import HttpChatProvider, chat_completion_text, chat_messages, sampling_params, text_response

DEFAULT_AZURE_API_VERSION = "2024-12-01-preview"


def normalise_api_version(value: str | None) -> str:
    if not value or not value.strip():
        return DEFAULT_AZURE_API_VERSION
    stripped = re.sub(r"^api[-_]?version\s*=\s*", "", value.strip(), flags=re.IGNORECASE).strip()
    return stripped or DEFAULT_AZURE_API_VERSION


def azure_base_url(endpoint: str) -> str:
    """`https://x.openai.azure.com` -> `.../openai`; a bare resource name -> its default host."""
    trimmed = endpoint.strip()
    if not re.match(r"^https?://", trimmed, flags=re.IGNORECASE):
        return f"https://{trimmed}.openai.azure.com/openai"
    trimmed = trimmed.rstrip("/")
    return trimmed if trimmed.endswith("/openai") else f"{trimmed}/openai"


class AzureOpenAIProvider(HttpChatProvider):
    kind = "azure"

    def __init__(self, target: TargetConfig) -> None:
        super().__init__(target)
        endpoint = str(target.require("endpoint", "endpoint", "resource", "resourceName", "resource_name"))
        self.base_url = azure_base_url(endpoint)
        self.deployment = str(
            target.require("deployment", "deployment", "deployment_name", "deploymentName", "model")
        )
        self._api_key = str(target.require("api_key", "api_key", "apiKey"))
        self.api_version = normalise_api_version(target.get("version", "api_version", "apiVersion"))

    def __repr__(self) -> str:
        return (
            f"AzureOpenAIProvider(name={self.name!r}, base_url={self.base_url!r}, "
            f"deployment={self.deployment!r})"
        )

    @property
    def url(self) -> str:
        return (
            f"{self.base_url}/deployments/{quote(self.deployment, safe='')}/chat/completions"
            f"?api-version={quote(self.api_version, safe='')}"
        )

    def headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", "api-key": self._api_key}

    def build_body(self, request: ProviderRequest) -> dict[str, Any]:
        return {"messages": chat_messages(request, self.system_prompt),
                **sampling_params(request, self.temperature, self.max_output_tokens)}

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        started = time.monotonic()
        result = self.post(request)
        text, usage, raw = chat_completion_text(result.data, self.target.describe(), result.retries)
        raw["deployment"] = self.deployment
        return text_response(text, started=started, retries=result.retries, usage=usage, raw=raw)
