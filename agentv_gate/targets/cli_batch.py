"""`provider_batching: true` on a `cli` target: one run of the command answers every case of a suite.

As AgentV 2.19 runs it (`CliProvider.invokeBatch`, `runBatchEvaluation`): for each eval file, the
command runs once, with `{PROMPT}` and `{GUIDELINES}` empty, `{EVAL_ID}` `batch`, `{ATTEMPT}` 0, and
`{OUTPUT_FILE}` a `.jsonl` file, in the target's `cwd`, after the target's healthcheck. Each line of
that file is one case's answer: a JSON object with the case's `id` and what a single run's output
file holds (`output` / `output_messages` messages, or `text`; `token_usage`, `cost_usd`,
`duration_ms`). A record without `duration_ms` gets the run's time divided by the number of cases.
A case with no record is scored on the answer `Error: Batch output missing id 'x'` and is an error
(`raw["provider_error"]`), as in AgentV; the others are scored as usual.

When the batch cannot be run or read (the healthcheck fails, the command fails or times out, no
output file, a line that is not JSON or has no `id`, an id twice), AgentV falls back to running the
cases one by one, and so does the gate. A case with trials (more than one) is always run on its own,
as AgentV disables batching for a file with trials. The batch of a suite starts when its first case
does; the cases it answers wait for it.

`{FILES}` in a batching command (AgentV gives it every case's files at once) is not run yet:
`targets/config.py` refuses it at its line.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import ProviderError
from ..models import PROVIDER_ERROR, Message, TargetResponse
from ..transport.process import run_script
from .base import Provider, ProviderRequest
from .cli_target import CLI_PLACEHOLDERS, CliProvider, parse_cli_output, render, resolve_folder


class _Planned(Protocol):
    """What a run knows of each case before running it (`loader.plan.CaseRef`)."""

    @property
    def id(self) -> str: ...

    @property
    def suite(self) -> str: ...


@dataclass
class _Batch:
    """One suite's batch on one target: the cases it answers, and their answers once it ran."""

    case_ids: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ran: bool = False
    answers: dict[str, TargetResponse] | None = None
    """Per case id; None when the batch failed (the cases then run one by one)."""
    fallback_ms: int = 0
    """The run's time over the number of cases: the duration of a record that reports none."""


class BatchedCli:
    """A `cli` target with `provider_batching: true` (see the module's docstring)."""

    kind = "cli"

    def __init__(self, inner: CliProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"BatchedCli({self.inner!r})"

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def plan(self, suite: str, case_id: str) -> None:
        """Count `case_id` into `suite`'s batch (before the run: the batch answers the cases planned)."""
        with self._lock:
            batch = self._batches.setdefault(suite, _Batch())
            if case_id not in batch.case_ids:
                batch.case_ids.append(case_id)

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        batch = self._batches.get(str(request.suite))
        case_id = request.eval_case_id or ""
        if batch is None or request.trials > 1 or case_id not in batch.case_ids:
            return self.inner.invoke(request)
        with batch.lock:
            if not batch.ran:
                try:
                    batch.answers = self._run(batch, request.run.eval_dir if request.run else None)
                except ProviderError:  # AgentV: "falling back to per-case dispatch" (said only with --verbose)
                    batch.answers = None
                batch.ran = True
        if batch.answers is None:
            return self.inner.invoke(request)
        answer = batch.answers.get(case_id)
        if answer is None:  # AgentV scores the error text as the answer, and marks the case an error
            message = f"Batch output missing id '{case_id}'"
            return TargetResponse(text=f"Error: {message}", output_messages=[
                Message(role="assistant", content=f"Error: {message}")], duration_ms=batch.fallback_ms,
                raw={"batch": True, PROVIDER_ERROR: message})
        return answer

    def _run(self, batch: _Batch, eval_dir: str | None) -> dict[str, TargetResponse]:
        inner = self.inner
        inner._ensure_healthy(eval_dir)
        workdir = Path(tempfile.mkdtemp(prefix="agentv-gate-batch-"))
        try:
            prompt_file = workdir / "batch.prompt.txt"
            prompt_file.write_text("", encoding="utf-8")
            output_file = workdir / "batch.jsonl"
            values = {name: "''" for name in CLI_PLACEHOLDERS}
            values.update({"PROMPT_FILE": shlex.quote(str(prompt_file)), "EVAL_ID": "batch", "ATTEMPT": "0",
                           "FILES": "", "OUTPUT_FILE": shlex.quote(str(output_file))})
            command = render(inner.command_template, values)
            started = time.monotonic()
            result = run_script(["/bin/sh", "-c", command], "", inner.timeout_seconds,
                                cwd=resolve_folder(inner.cwd, eval_dir, lambda: inner.target.repo_root), env=inner.env or None,
                                max_output_bytes=inner.max_response_bytes)
            failure = inner._failure(result, inner.timeout_seconds)
            if failure:
                raise ProviderError(f"{inner.target.describe()}: batch: {failure}")
            records = parse_batch_output(inner._read_output_file(output_file), inner.target.describe())
            batch.fallback_ms = round((time.monotonic() - started) * 1000 / max(len(batch.case_ids), 1))
            raw = {"command": inner.target.redact(command)[:2000], "exit_code": result.exit_code, "batch": True}
            return {case_id: _answer(record, batch.fallback_ms, raw) for case_id, record in records.items()}
        finally:
            if not inner.keep_temp_files:
                shutil.rmtree(workdir, ignore_errors=True)


def parse_batch_output(text: str, where: str) -> dict[str, dict[str, Any]]:
    """Case id -> its record, from the batch's JSONL; a line AgentV refuses fails the whole batch."""
    records: dict[str, dict[str, Any]] = {}
    for line in (line.strip() for line in text.splitlines()):
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ProviderError(f"{where}: CLI batch output contains invalid JSONL line: {exc}") from None
        if not isinstance(record, dict):
            raise ProviderError(f"{where}: CLI batch output JSONL line must be an object")
        if not isinstance(record.get("id"), str):
            raise ProviderError(f"{where}: CLI batch output JSONL line missing required string field: id")
        if record["id"] in records:
            raise ProviderError(f"{where}: CLI batch output contains duplicate id: {record['id']}")
        records[record["id"]] = record
    return records


def _js_json(value: Any) -> str:
    """JavaScript's `JSON.stringify` of a parsed JSON value: no spaces, integral numbers without `.0`."""
    def js(item: Any) -> Any:
        if isinstance(item, float) and item.is_integer() and abs(item) < 1e21:
            return int(item)
        if isinstance(item, dict):
            return {key: js(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [js(inner) for inner in item]
        return item
    return json.dumps(js(value), separators=(",", ":"), ensure_ascii=False)


def _answer(record: dict[str, Any], fallback_ms: int, raw: dict[str, Any]) -> TargetResponse:
    """One record as a single run's answer: its messages (or text), tokens, cost and duration."""
    body = {key: value for key, value in record.items() if key != "id"}
    if not any(key in body for key in ("output", "output_messages", "text")):
        body["text"] = ""  # AgentV: no messages and no text is an empty answer, not the record as text
    elif "text" in body and not isinstance(body["text"], str):
        body["text"] = _js_json(body["text"])  # AgentV's batch reader: JSON.stringify(text), compact
    text, messages, metrics = parse_cli_output(json.dumps(body), verbatim=True)
    if not text and messages == [Message(role="assistant", content="")]:
        messages = []
    duration = metrics.get("duration_ms")
    return TargetResponse(
        text=text, output_messages=messages,
        token_usage=metrics.get("token_usage") if isinstance(metrics.get("token_usage"), dict) else None,
        cost_usd=metrics.get("cost_usd") if isinstance(metrics.get("cost_usd"), (int, float)) else None,
        duration_ms=int(duration) if isinstance(duration, (int, float)) and duration >= 0 else fallback_ms,
        raw={**raw, "record_id": record["id"]},
    )


def batched(provider: Provider) -> BatchedCli | None:
    """The BatchedCli inside a provider's wrappers (cache, prices, concurrency cap), if any."""
    seen = 0
    current: Any = provider
    while current is not None and seen < 10:
        if isinstance(current, BatchedCli):
            return current
        current = current.__dict__.get("inner") if hasattr(current, "__dict__") else None
        seen += 1
    return None


class _Targets(Protocol):
    def target_names(self, case: Any) -> list[str]: ...

    def provider(self, name: str) -> Provider: ...

    def batching(self, name: str) -> bool: ...


def plan_batches(targets: _Targets, cases: Iterable[_Planned]) -> None:
    """Tell each batching target which cases of each suite it answers, before the run starts."""
    for case in cases:
        for name in targets.target_names(case):
            if targets.batching(name):
                found = batched(targets.provider(name))
                if found is not None:
                    found.plan(case.suite, case.id)


__all__: Sequence[str] = ["BatchedCli", "batched", "parse_batch_output", "plan_batches"]
