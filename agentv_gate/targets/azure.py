"""Azure OpenAI chat completions: the deployment URL with `api-version`, or Azure's v1 API.

Keys as AgentV resolves them: endpoint `endpoint ?? resource ?? resourceName` (a full URL, or
a bare resource name meaning https://<name>.openai.azure.com), key `api_key ?? apiKey` (sent as
the `api-key` header), deployment `deployment ?? deployment_name ?? deploymentName ?? model` (so a `model` beside a
deployment is never read, as in AgentV: `AzureSettings`),
API version `version ?? api_version` (default 2024-12-01-preview; a leading `api-version=` is
stripped), plus `temperature`, `max_output_tokens`, `system_prompt`, the reasoning-model and
structured-output keys of `ChatOptions`, and the retry keys.

Which API is used follows from the endpoint and version given:

* deployment URL (the default): `<endpoint>/openai/deployments/<deployment>/chat/completions
  ?api-version=<version>`, as the AI SDK builds it. The deployment decides the model, so a
  judge's `model:` override is not applied.
* v1 API, when the endpoint ends in `/v1` (`https://<resource>.openai.azure.com/openai/v1`) or
  `version: v1`: `<resource>/openai/v1/chat/completions` with the deployment name as `model`
  in the body and no `api-version` (`version: preview` sends `api-version=preview`, for
  Azure's preview features). A dated version with a v1 endpoint is refused, not guessed at.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from ..errors import TargetsConfigError
from ..models import TargetResponse
from .base import ProviderRequest
from .config import TargetConfig
from .openai_compat import HttpChatProvider, chat_completion_text, chat_messages, chat_tool_calls, text_response
from .settings import AzureSettings

DEFAULT_AZURE_API_VERSION = "2024-12-01-preview"
V1_VERSIONS = ("v1", "preview")
"""What `version` may say with the v1 API: none (`v1`) or Azure's `preview` channel."""


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


def v1_base_url(endpoint: str) -> str | None:
    """The v1 API's base when `endpoint` names it (ends in `/v1`), else None."""
    trimmed = endpoint.strip().rstrip("/")
    return trimmed if re.match(r"^https?://", trimmed, flags=re.IGNORECASE) and trimmed.endswith("/v1") else None


class AzureOpenAIProvider(HttpChatProvider):
    kind = "azure"

    def __init__(self, target: TargetConfig) -> None:
        super().__init__(target)
        settings = target.read(AzureSettings)
        endpoint = str(target.required(settings, "endpoint"))
        self.deployment = str(target.required(settings, "deployment"))
        self._api_key = str(target.required(settings, "api_key"))
        version = settings.version
        self.api_version = normalise_api_version(str(version) if version is not None else None)
        v1_base = v1_base_url(endpoint)
        self.v1 = v1_base is not None or self.api_version.lower() == "v1"
        if self.v1 and self.api_version.lower() not in V1_VERSIONS:
            if version is None:
                self.api_version = "v1"
            else:
                raise TargetsConfigError(
                    f"{target.describe()}: endpoint {endpoint} is Azure's v1 API, which takes no dated "
                    f"api-version, but version is {version!r}; remove `version` (or set it to v1 or "
                    f"preview), or give the resource endpoint (without /openai/v1) to use the deployment URL"
                )
        self.base_url = v1_base or (f"{azure_base_url(endpoint)}/v1" if self.v1 else azure_base_url(endpoint))

    def __repr__(self) -> str:
        return (
            f"AzureOpenAIProvider(name={self.name!r}, base_url={self.base_url!r}, "
            f"deployment={self.deployment!r})"
        )

    @property
    def url(self) -> str:
        if self.v1:
            query = "?api-version=preview" if self.api_version.lower() == "preview" else ""
            return f"{self.base_url}/chat/completions{query}"
        return (
            f"{self.base_url}/deployments/{quote(self.deployment, safe='')}/chat/completions"
            f"?api-version={quote(self.api_version, safe='')}"
        )

    def headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", "api-key": self._api_key}

    def build_body(self, request: ProviderRequest) -> dict[str, Any]:
        if self.v1:
            model = request.model or self.deployment
            return {"model": model, "messages": chat_messages(request, self.system_prompt),
                    **self.options.params(request, model)}
        return {"messages": chat_messages(request, self.system_prompt),
                **self.options.params(request, self.deployment)}

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        result = self.post(request)
        text, usage, raw = chat_completion_text(result.data, self.target.describe(), result.retries)
        raw["deployment"] = self.deployment
        return text_response(text, retries=result.retries, usage=usage, raw=raw,
                             tool_calls=chat_tool_calls(result.data))
