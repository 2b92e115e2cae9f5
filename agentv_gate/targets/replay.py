"""AgentV 4.x's `replay` target: each case answered from a recorded target output, the graders run fresh.

```yaml
- name: replay_coding_agent
  provider: replay
  fixtures: ../fixtures/replay-target-output.jsonl   # relative to the eval file's folder, as in AgentV
  suite: trace-evaluation-showcase
  source_target: live_coding_agent
```

A fixture file is JSONL of `agentv.replay_fixture.v1` records, read as AgentV 4.42 reads them (one strict record
a line; a record that does not fit its schema fails the case, naming the line). The case's record is the one
whose `suite`, `test_id`, `source_target`, `attempt` (0) and `variant` are the lookup's, and whose `eval_path`,
when it has one, is the eval file's (`eval_path:` on the target, else the eval file); none or two are an error,
never an answer. Its `output` messages, `token_usage`, `cost_usd` and `duration_ms` are the answer.

What is not done: `execution_traces` (AgentV's trace-envelope source) is refused by name; a target without
`suite:` is an error, since AgentV then looks the record up by its own suite name (the suite's `name:`, else
the file's name), which the gate does not derive. The fixture file must lie inside the eval file's repository,
since a pull request's target must not make the gate read a runner's files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ProviderError, TargetsConfigError
from ..models import Message, TargetResponse
from .base import ProviderRequest
from .cli_target import _last_assistant_text
from .config import TargetConfig
from .settings import ReplaySettings

SCHEMA_VERSION = "agentv.replay_fixture.v1"

_RECORD_KEYS = {"schema_version", "suite", "eval_path", "test_id", "source_target", "attempt", "variant",
                "fixture_id", "recorded_at", "source", "redaction", "output", "transcript", "token_usage",
                "cost_usd", "duration_ms", "start_time", "end_time"}
_MESSAGE_KEYS = {"role", "name", "content", "tool_calls", "start_time", "end_time", "duration_ms", "metadata",
                 "token_usage"}
_CALL_KEYS = {"tool", "input", "output", "id", "status", "start_time", "end_time", "duration_ms"}
_USAGE_KEYS = {"input", "output", "cached", "reasoning"}


def _text(value: Any, *, empty: bool = True) -> bool:
    return isinstance(value, str) and (empty or value != "")


def _amount(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _usage_problem(usage: Any, where: str) -> str | None:
    if not isinstance(usage, dict) or set(usage) - _USAGE_KEYS:
        return f"{where}: not a token usage"
    if not (_amount(usage.get("input")) and _amount(usage.get("output"))):
        return f"{where}: input and output must be numbers >= 0"
    bad = [k for k in ("cached", "reasoning") if k in usage and not _amount(usage[k])]
    return f"{where}.{bad[0]}: must be a number >= 0" if bad else None


def _times_problem(value: dict[str, Any], where: str) -> str | None:
    bad = [k for k in ("start_time", "end_time", "id", "name") if k in value and not _text(value[k])]
    if bad:
        return f"{where}.{bad[0]}: must be text"
    if "duration_ms" in value and not _amount(value["duration_ms"]):
        return f"{where}.duration_ms: must be a number >= 0"
    return None


def _call_problem(call: Any, where: str) -> str | None:
    if not isinstance(call, dict):
        return f"{where}: not a tool call"
    extra = sorted(set(call) - _CALL_KEYS)
    if extra:
        return f"{where}: unknown key '{extra[0]}'"
    if not _text(call.get("tool"), empty=False):
        return f"{where}.tool: must be non-empty text"
    if "status" in call and call["status"] not in ("ok", "error", "timeout", "cancelled", "unknown"):
        return f"{where}.status: not one of ok, error, timeout, cancelled, unknown"
    return _times_problem(call, where)


def _message_problem(message: Any, where: str) -> str | None:
    if not isinstance(message, dict):
        return f"{where}: not a message"
    extra = sorted(set(message) - _MESSAGE_KEYS)
    if extra:
        return f"{where}: unknown key '{extra[0]}'"
    if not _text(message.get("role"), empty=False):
        return f"{where}.role: must be non-empty text"
    if "metadata" in message and not isinstance(message["metadata"], dict):
        return f"{where}.metadata: must be a mapping"
    if "token_usage" in message and (found := _usage_problem(message["token_usage"], f"{where}.token_usage")):
        return found
    calls = message.get("tool_calls", [])
    if not isinstance(calls, list):
        return f"{where}.tool_calls: must be a list"
    for index, call in enumerate(calls):
        if found := _call_problem(call, f"{where}.tool_calls.{index}"):
            return found
    return _times_problem(message, where)


def record_problem(record: Any) -> str | None:
    """Why AgentV 4.42's strict fixture schema refuses `record`, or None."""
    if not isinstance(record, dict):
        return "<record>: not an object"
    extra = sorted(set(record) - _RECORD_KEYS)
    if extra:
        return f"<record>: unknown key '{extra[0]}'"
    if record.get("schema_version") != SCHEMA_VERSION:
        return f"schema_version: must be {SCHEMA_VERSION}"
    for key in ("suite", "test_id", "source_target"):
        if not _text(record.get(key), empty=False):
            return f"{key}: must be non-empty text"
    for key in ("eval_path", "fixture_id"):
        if key in record and not _text(record[key], empty=False):
            return f"{key}: must be non-empty text"
    attempt = record.get("attempt", 0)
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 0:
        return "attempt: must be a whole number >= 0"
    if record.get("variant") is not None and not _text(record["variant"], empty=False):
        return "variant: must be non-empty text or null"
    for key in ("source", "redaction"):
        if key in record and not isinstance(record[key], dict):
            return f"{key}: must be a mapping"
    if "recorded_at" in record and not _text(record["recorded_at"]):
        return "recorded_at: must be text"
    if not isinstance(record.get("output"), list):
        return "output: must be a list of messages"
    for index, message in enumerate(record["output"]):
        if found := _message_problem(message, f"output.{index}"):
            return found
    if "token_usage" in record and (found := _usage_problem(record["token_usage"], "token_usage")):
        return found
    for key in ("cost_usd", "duration_ms"):
        if key in record and not _amount(record[key]):
            return f"{key}: must be a number >= 0"
    bad = [k for k in ("start_time", "end_time") if k in record and not _text(record[k])]
    return f"{bad[0]}: must be text" if bad else None


def _normal_path(value: str) -> str:
    text = value.replace("\\", "/")
    text = text[2:] if text.startswith("./") else text
    while "//" in text:
        text = text.replace("//", "/")
    return text


def same_eval_path(recorded: str, looked_up: str) -> bool:
    """AgentV's `sameReplayEvalPath`: equal once normalised, or an absolute lookup ending in `/<recorded>`."""
    record, lookup = _normal_path(recorded), _normal_path(looked_up)
    return record == lookup or (looked_up.startswith("/") and lookup.endswith(f"/{record}"))


def _repository(folder: Path) -> Path:
    """The eval file's repository, as the loader finds it: the enclosing git checkout, else the nearest
    folder holding `.agentv`, else the eval file's own folder."""
    folder = folder.resolve()
    for marker in (".git", ".agentv"):
        for candidate in (folder, *folder.parents):
            if (candidate / marker).exists():
                return candidate
    return folder


class ReplayProvider:
    kind = "replay"

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target
        settings = target.read(ReplaySettings)
        where = target.describe()
        if settings.execution_traces is not None:
            raise TargetsConfigError(f"{where}: 'execution_traces' (replay from AgentV trace envelopes) is an "
                                     "AgentV feature agentv-gate does not run yet; record 'fixtures' instead")
        if not _text(settings.fixtures, empty=False):
            raise TargetsConfigError(f"{where}: requires exactly one replay source: \"fixtures\" or "
                                     "\"execution_traces\"")
        if not _text(settings.source_target, empty=False):
            raise TargetsConfigError(f"{where}: source_target is required (the target whose outputs were recorded)")
        if not _text(settings.suite, empty=False):
            raise TargetsConfigError(f"{where}: 'suite' is required here: AgentV then looks records up by its own "
                                     "suite name, which agentv-gate does not derive; write the recorded suite")
        for key in ("eval_path", "variant"):
            if getattr(settings, key) is not None and not _text(getattr(settings, key), empty=False):
                raise TargetsConfigError(f"{where}: {key} must be text")
        self.fixtures: str = settings.fixtures
        self.source_target: str = settings.source_target
        self.suite: str = settings.suite
        self.eval_path: str | None = settings.eval_path
        self.variant: str | None = settings.variant

    def _fixture_file(self, request: ProviderRequest) -> Path:
        base = Path(request.run.eval_dir) if request.run is not None and request.run.eval_dir else Path.cwd()
        path = (base / self.fixtures).resolve()
        root = _repository(base)
        if not path.is_relative_to(root):
            raise ProviderError(f"{self.target.describe()}: the fixture file {self.fixtures!r} lies outside the "
                                f"repository {root} of the eval file; it is not read")
        return path

    def _records(self, path: Path) -> list[dict[str, Any]]:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ProviderError(f"Replay fixture file not found or unreadable: {path}: {exc.strerror}") from None
        records: list[dict[str, Any]] = []
        for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ProviderError(f"Invalid replay fixture JSONL at {path}:{number}: {exc}") from None
            problem = record_problem(record)
            if problem:
                raise ProviderError(f"Invalid replay fixture record at {path}:{number}: {problem}")
            records.append(record)
        return records

    def _matches(self, record: dict[str, Any], test_id: str, eval_path: str | None) -> bool:
        if record["suite"] != self.suite:
            return False
        if "eval_path" in record and (eval_path is None or not same_eval_path(record["eval_path"], eval_path)):
            return False
        return (record["test_id"] == test_id and record["source_target"] == self.source_target
                and record.get("attempt", 0) == 0 and record.get("variant") == self.variant)

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        test_id = request.eval_case_id
        if not test_id:
            raise ProviderError("Replay provider requires evalCaseId on provider requests")
        eval_path = self.eval_path or (request.run.eval_file if request.run is not None else None)
        records = self._records(self._fixture_file(request))
        found = [record for record in records if self._matches(record, test_id, eval_path)]
        key = " ".join(part for part in (f"suite={self.suite}", f"eval_path={eval_path}" if eval_path else None,
                                         f"test_id={test_id}", f"source_target={self.source_target}", "attempt=0",
                                         f"variant={self.variant or '<none>'}") if part)
        if not found:
            raise ProviderError(f"Replay fixture lookup found no record for {key}")
        if len(found) > 1:
            raise ProviderError(f"Replay fixture lookup found {len(found)} duplicate records for {key}")
        record = found[0]
        raw_messages = record["output"]
        return TargetResponse(
            text=_last_assistant_text(raw_messages),
            output_messages=[Message.model_validate(m)
                             for m in raw_messages],
            token_usage=record.get("token_usage"),
            cost_usd=record.get("cost_usd"),
            duration_ms=int(record["duration_ms"]) if "duration_ms" in record else None,
            raw={"replay_fixture": {k: record[k] for k in ("fixture_id", "suite", "eval_path", "test_id",
                                                           "source_target", "attempt", "variant") if k in record}},
        )
