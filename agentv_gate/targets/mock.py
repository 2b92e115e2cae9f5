"""A target that answers from its config: offline examples, tests and benchmarks need no network.

Keys (AgentV's `response`, `delay_ms`, `delay_min_ms`, `delay_max_ms`, plus ours):

```yaml
- name: offline
  provider: mock
  response: "Paris"                      # the default answer (text, or a mapping sent as JSON)
  responses:                             # optional, per case; first matching rule wins
    - id: capital-of-italy               #   match on the case id ...
      response: "Rome"
    - contains: "Spain"                  #   ... or a substring of the question / prompt
      response: "Madrid"
    - regex: "(?i)largest planet"        #   ... or a regular expression (all given must match)
      response: "Jupiter"
  judge_response:                        # what it says when used as an LLM judge
    {score: 0.9, hits: ["names the capital"], misses: [], reasoning: "Correct."}
  delay_ms: 20                           # or delay_min_ms / delay_max_ms for a uniform range
```

`responses` may also be a plain mapping `{case id: answer}`. A rule may carry its own
`judge_response`, so one mock judge can grade cases differently. When it is asked to judge and
no judge reply is configured, it answers with `response`, as AgentV's mock does.
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from ..base.defaults import MAX_DURATION_MS
from ..errors import TargetsConfigError
from ..models import Message, TargetResponse
from .base import ProviderRequest
from .config import TargetConfig
from .settings import MockRuleSettings, MockSettings

DEFAULT_MOCK_RESPONSE = (
    '{"answer":"Mock provider response. Configure targets.yaml to supply a custom value."}'
)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@dataclass
class _Rule:
    case_id: str | None
    contains: str | None
    regex: re.Pattern[str] | None
    response: str | None
    judge_response: str | None

    def matches(self, request: ProviderRequest) -> bool:
        if self.case_id is not None and request.eval_case_id != self.case_id:
            return False
        if self.contains is not None and self.contains not in request.question:
            return False
        return self.regex is None or self.regex.search(request.question) is not None


class MockProvider:
    kind = "mock"

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target
        settings = target.read(MockSettings)
        self.response = _as_text(DEFAULT_MOCK_RESPONSE if settings.response is None else settings.response)
        self.judge_response = None if settings.judge_response is None else _as_text(settings.judge_response)
        self.rules = self._rules([] if settings.responses is None else settings.responses)
        self.delay_ms = self._ms("delay_ms", settings.delay_ms)
        self.delay_min_ms = self._ms("delay_min_ms", settings.delay_min_ms)
        self.delay_max_ms = self._ms("delay_max_ms", settings.delay_max_ms)

    def __repr__(self) -> str:
        return f"MockProvider(name={self.name!r}, rules={len(self.rules)})"

    def _ms(self, key: str, value: Any) -> float:
        value = 0 if value is None else value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_DURATION_MS:
            raise TargetsConfigError(
                f"{self.target.describe()}: {key} must be a non-negative number of ms, at most {MAX_DURATION_MS}"
            )
        return float(value)

    def _rules(self, raw: Any) -> list[_Rule]:
        where = self.target.describe()
        if isinstance(raw, dict):
            return [_Rule(str(k), None, None, _as_text(v), None) for k, v in raw.items()]
        if not isinstance(raw, list):
            raise TargetsConfigError(
                f"{where}: responses must be a list of rules or a mapping of case id to answer"
            )
        rules: list[_Rule] = []
        for index, item in enumerate(raw):
            if not isinstance(item, dict):
                raise TargetsConfigError(f"{where}: responses[{index}] must be a mapping")
            case_id = next((item[key] for key in MockRuleSettings.spellings("id") if key in item), None)
            pattern = item.get("regex")
            try:
                regex = re.compile(str(pattern)) if pattern is not None else None
            except re.error as exc:
                raise TargetsConfigError(
                    f"{where}: responses[{index}].regex is not a valid pattern: {exc}"
                ) from None
            response = item.get("response")
            judge = item.get("judge_response")
            if response is None and judge is None:
                raise TargetsConfigError(f"{where}: responses[{index}] needs a response or a judge_response")
            if case_id is None and item.get("contains") is None and regex is None:
                raise TargetsConfigError(
                    f"{where}: responses[{index}] needs id, contains or regex to match on"
                )
            rules.append(
                _Rule(
                    case_id=None if case_id is None else str(case_id),
                    contains=None if item.get("contains") is None else str(item["contains"]),
                    regex=regex,
                    response=None if response is None else _as_text(response),
                    judge_response=None if judge is None else _as_text(judge),
                )
            )
        return rules

    def _delay_seconds(self) -> float:
        if self.delay_min_ms > 0 or self.delay_max_ms > 0:
            low = self.delay_min_ms
            return random.uniform(low, max(low, self.delay_max_ms)) / 1000.0
        return self.delay_ms / 1000.0

    def answer_for(self, request: ProviderRequest) -> str:
        judging = request.role == "judge"
        for rule in self.rules:
            reply = rule.judge_response if judging else rule.response
            if reply is not None and rule.matches(request):
                return reply
        if judging and self.judge_response is not None:
            return self.judge_response
        return self.response

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        delay = self._delay_seconds()
        if delay > 0:
            time.sleep(delay)
        text = self.answer_for(request)
        return TargetResponse(
            text=text,
            output_messages=[Message(role="assistant", content=text)],
            raw={"question": request.question, "provider": "mock"},
        )
