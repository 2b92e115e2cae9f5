"""A target that is any command line: the agent under test runs once per case.

Keys as AgentV has them (snake_case or camelCase): `command` (required; AgentV 2.8+'s name, the
older `command_template` still works), `cwd`, `timeout_seconds` (default here 120),
`files_format` (default `{path}`), `env` (extra variables), `keep_temp_files`, `healthcheck`
(`{command, cwd, timeout_seconds}` or `{url, timeout_seconds}`, run once before the first case;
the older `type: command` / `type: http` with `command_template` still works).

A relative `cwd` (the target's or the healthcheck's) is relative to the folder of the eval file
whose case is running, as AgentV resolves it; with no eval file (a target used on its own) it is
relative to the folder holding `.agentv/`. No `cwd` means the eval file's folder.

Placeholders in the template, each shell-quoted: `{PROMPT}` (the question text), `{PROMPT_FILE}`
(a file holding it), `{EVAL_ID}`, `{ATTEMPT}`, `{FILES}` (every file the case attaches, guideline
files first as AgentV orders them, each through `files_format`, which may use `{path}` and
`{basename}`), `{OUTPUT_FILE}` and `{GUIDELINES}` (kept for old templates; always empty). Any other
`{UPPER_CASE}` word is refused up front.

The prompt is also written to the command's stdin. The answer is read from `{OUTPUT_FILE}` when
the template names it (as AgentV does), else from stdout. A JSON object that fits AgentV's CLI
output schema gives the answer from `output`/`output_messages` (the last assistant content), else
from `text`, with `token_usage`, `cost_usd` and `duration_ms`; one that does not fit, or anything
else, is the answer as written (see `parse_cli_output`). A reply's `error` makes the case an error.

The command runs under `/bin/sh -c` in its own process group, which is killed at the timeout,
exactly as from the user's shell: PATH and every variable as agentv-gate received them, plus only
the target's `env:`. It is the system under test, so it is always started afresh, as a
judge is, and nothing of agentv-gate's own (its interpreter, the judges' SDK path) is put in
front of it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..base.defaults import MAX_DURATION_MS
from ..base.jscompat import js_trim
from ..errors import ProviderError, TargetsConfigError
from ..models import Message, TargetResponse
from ..transport.process import ScriptResult, run_script
from .base import ProviderRequest
from .config import TargetConfig, response_byte_cap
from .settings import CliSettings, HealthcheckSettings

CLI_PLACEHOLDERS = ("PROMPT", "PROMPT_FILE", "GUIDELINES", "EVAL_ID", "ATTEMPT", "FILES", "OUTPUT_FILE")
DEFAULT_TIMEOUT_SECONDS = 120.0
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
_FILE_PLACEHOLDERS = frozenset({"PROMPT_FILE", "OUTPUT_FILE"})
"""What a command names to be given the case's temporary folder (the prompt's file, the answer's)."""
_DETAIL_CHARS = 2000


def check_placeholders(template: str, description: str) -> None:
    for name in _PLACEHOLDER.findall(template):
        if name not in CLI_PLACEHOLDERS:
            raise TargetsConfigError(
                f"{description} uses unsupported placeholder '{{{name}}}'; supported: "
                + ", ".join(f"{{{p}}}" for p in CLI_PLACEHOLDERS)
            )


def render(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _template(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TargetsConfigError(f"{where}: command must be a command line (a string), got {value!r}")
    return value


def resolve_folder(folder: str | None, eval_dir: str | None, fallback: Callable[[], Path]) -> Path | None:
    """A target's `cwd` as AgentV reads it: absolute as written, relative from the running case's
    eval-file folder (else `fallback`, a callable asked only then: a target's `repo_root` resolves its
    file's path, a walk of the folders that every case of a run paid for nothing); no `cwd` means the
    eval file's folder."""
    if folder is None:
        return Path(eval_dir) if eval_dir else None
    path = Path(folder).expanduser()
    if path.is_absolute():
        return path
    if eval_dir:
        return (Path(eval_dir) / path).resolve()
    return (fallback() / path).resolve()


def _seconds(target: TargetConfig, value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_DURATION_MS / 1000:
        raise TargetsConfigError(
            f"{target.describe()}: {key} must be a positive number of seconds, at most "
            f"{MAX_DURATION_MS / 1000:.3f}, got {value!r}"
        )
    return float(value)


def _number(value: Any) -> bool:
    """zod's `z.number()`: a JSON number, never a boolean (Python's `True` is an int) or text."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _optional(data: dict[str, Any], key: str, check: Any) -> bool:
    """zod's `.optional()`: the key absent, or present with a value `check` accepts (`null` is not absent)."""
    return key not in data or bool(check(data[key]))


def _tool_call_fits(call: Any) -> bool:
    return (isinstance(call, dict) and isinstance(call.get("tool"), str) and _optional(call, "id", _is_text)
            and all(_optional(call, key, _is_text) for key in ("start_time", "end_time"))
            and _optional(call, "duration_ms", _number))


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _message_fits(message: Any) -> bool:
    """AgentV's `MessageInputSchema`: a text `role`; `name`, times and `tool_calls` of their types."""
    return (isinstance(message, dict) and isinstance(message.get("role"), str)
            and all(_optional(message, key, _is_text) for key in ("name", "start_time", "end_time"))
            and _optional(message, "duration_ms", _number)
            and _optional(message, "metadata", lambda v: isinstance(v, dict))
            and _optional(message, "tool_calls", lambda v: isinstance(v, list) and all(map(_tool_call_fits, v))))


def _fits_agentv_schema(data: dict[str, Any]) -> bool:
    """Whether AgentV's `CliOutputSchema.safeParse` accepts the reply. When it does not, AgentV takes the
    whole output as the answer text, so a reply with one malformed field (`cost_usd: "0.01"`, a
    `token_usage` without `output`, a message without `role`) is judged as the JSON it is, never as
    its `text`."""
    def messages(value: Any) -> bool:
        return isinstance(value, list) and all(map(_message_fits, value))

    def usage(value: Any) -> bool:
        return (isinstance(value, dict) and _number(value.get("input")) and _number(value.get("output"))
                and _optional(value, "cached", _number))

    return (_optional(data, "output", messages) and _optional(data, "output_messages", messages)
            and _optional(data, "token_usage", usage)
            and all(_optional(data, key, _number) for key in ("cost_usd", "duration_ms")))


def js_string(value: Any) -> str:
    """JavaScript's `String(value)` of a JSON value, as AgentV turns a `text` that is not text into the
    answer: `null` is "null", an object "[object Object]", a list its items joined by commas."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _last_assistant_text(raw: list[dict[str, Any]]) -> str:
    """AgentV's `extractLastAssistantContent`: the last assistant message that has content (a message of
    tool calls alone is passed over; `Message` would default its missing content to ""), else ""."""
    for item in reversed(raw):
        if item["role"] == "assistant" and item.get("content") is not None:
            return Message.model_validate(item).text()
    return ""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JavaScript's JSON.parse refuses NaN and Infinity


def parse_cli_output(text: str, *, verbatim: bool = False) -> tuple[str, list[Message], dict[str, Any]]:
    """(answer text, output messages, metrics) from what the command produced, as AgentV's
    `parseOutputContent` reads it.

    `verbatim` (an `{OUTPUT_FILE}`, which is what AgentV reads): the text is the answer as written, CRLF
    read as LF, never trimmed, since a regex `^Paris$` fails "Paris\\n" in AgentV. Otherwise (stdout, an
    agentv-gate extension) the surrounding white space of `print` is dropped.

    A JSON object is read only when it fits AgentV's schema (`_fits_agentv_schema`). Then `output` (or
    else `output_messages`), when it holds messages, gives the messages and the answer (the last
    assistant content), and `text` is not read; else `text` is the answer. A reply with neither is
    the answer as it was written. A negative `cost_usd` or `duration_ms` is dropped, as AgentV drops
    it. The reply's `error` is returned in the metrics (see `invoke`).
    """
    content = text.replace("\r\n", "\n") if verbatim else text.strip()
    plain: tuple[str, list[Message], dict[str, Any]] = (content, [Message(role="assistant", content=content)], {})
    try:
        data = json.loads(content, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # not JSON (or nested past Python's stack): a plain answer
        return plain
    if not isinstance(data, dict) or not _fits_agentv_schema(data):
        return plain
    metrics: dict[str, Any] = {k: data[k] for k in ("token_usage", "cost_usd", "duration_ms", "error")
                               if k in data and not (k in ("cost_usd", "duration_ms") and data[k] < 0)}
    raw_messages = data["output"] if "output" in data else data.get("output_messages")
    if raw_messages:
        return _last_assistant_text(raw_messages), [Message.model_validate(item) for item in raw_messages], metrics
    if "text" in data:
        answer = js_string(data["text"])
        return answer, [Message(role="assistant", content=answer)], metrics
    return content, plain[1], {"error": data["error"]} if "error" in data else {}


def _env_text(name: str, value: Any, describe: str) -> str:
    """An `env:` value as the agent's environment gets it: `true` as "true" and 2.0 as "2", as a shell
    or AgentV's JavaScript writes them (Python would say "True" and "2.0"). A list, a mapping or an
    empty value has no text form: refused rather than passed on as Python's spelling of it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (str, int, float)):
        return str(value)
    raise TargetsConfigError(f"{describe}: env.{name} must be text, a number or true/false, got {value!r}")


class CliProvider:
    kind = "cli"

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target
        settings = target.read(CliSettings)
        self.command_template = _template(target.required(settings, "command", "command or command_template"),
                                          target.describe())
        check_placeholders(self.command_template, f"{target.describe()}: command")
        timeout = settings.timeout_seconds
        self.timeout_seconds = (
            DEFAULT_TIMEOUT_SECONDS if timeout is None else _seconds(target, timeout, "timeout_seconds")
        )
        self.files_format = str("{path}" if settings.files_format is None else settings.files_format)
        self.cwd = None if settings.cwd is None else str(settings.cwd)
        env = {} if settings.env is None else settings.env
        if not isinstance(env, dict):
            raise TargetsConfigError(f"{target.describe()}: env must be a mapping of variable to value")
        self.env = {str(k): _env_text(str(k), v, target.describe()) for k, v in env.items()}
        keep = False if settings.keep_temp_files is None else settings.keep_temp_files
        if not isinstance(keep, bool):
            raise TargetsConfigError(f"{target.describe()}: keep_temp_files must be true or false, got {keep!r}")
        self.keep_temp_files = keep
        self.max_response_bytes = response_byte_cap(target)
        self.healthcheck = self._healthcheck(settings.healthcheck)
        self._health_lock = threading.Lock()
        self._health_error: str | None = None
        self._health_done = False

    def __repr__(self) -> str:
        return f"CliProvider(name={self.name!r}, timeout_seconds={self.timeout_seconds})"

    def _healthcheck(self, raw: Any) -> dict[str, Any] | None:
        """AgentV 2.8+ tells the kind by its keys (`url` or `command`); `type:` is the older spelling."""
        if raw is None:
            return None
        where = f"{self.target.describe()}: healthcheck"
        if not isinstance(raw, dict):
            raise TargetsConfigError(f"{where} must be a mapping: {{command: ...}} or {{url: ...}}")
        check_settings = HealthcheckSettings.read(raw)
        kind = raw.get("type")
        if kind is None:
            kind = "http" if "url" in raw else "command" if any(
                k in raw for k in HealthcheckSettings.spellings("command")) else None
        if kind not in ("command", "http"):
            raise TargetsConfigError(f"{where} must have 'command' (a command check) or 'url' (an HTTP check)"
                                     + (f", got type {raw['type']!r}" if "type" in raw else ""))
        timeout = check_settings.timeout_seconds
        check = {
            "type": kind,
            "timeout": self.timeout_seconds
            if timeout is None
            else _seconds(self.target, timeout, "healthcheck.timeout_seconds"),
        }
        if kind == "http":
            if not isinstance(raw.get("url"), str) or not raw["url"]:
                raise TargetsConfigError(f"{where}: url is required for an http healthcheck")
            check["url"] = raw["url"]
        else:
            command = check_settings.command
            if not isinstance(command, str) or not command.strip():
                raise TargetsConfigError(f"{where}: command (or command_template) is required for a command healthcheck")
            check_placeholders(command, f"{where}.command")
            check["command"] = command
            check["cwd"] = str(raw["cwd"]) if raw.get("cwd") else None
        return check

    def _ensure_healthy(self, eval_dir: str | None) -> None:
        if self.healthcheck is None:
            return
        with self._health_lock:
            if not self._health_done:
                self._health_error = self._run_healthcheck(eval_dir)
                self._health_done = True
        if self._health_error:
            raise ProviderError(self._health_error)

    def _run_healthcheck(self, eval_dir: str | None) -> str | None:
        check = self.healthcheck
        assert check is not None
        prefix = f"{self.target.describe()}: healthcheck failed"
        if check["type"] == "http":
            # Imported here: an HTTP stack costs a run of `cli` targets ~0.15 s of start-up otherwise.
            from ..transport.http_policy import http_call
            from .http_settings import retry_policy_for

            policy = replace(retry_policy_for(self.target), request_timeout_seconds=check["timeout"])
            try:
                http_call(
                    "GET",
                    check["url"],
                    policy=policy,
                    secrets=self.target.secrets,
                    describe=prefix,
                    expect_json=False,
                )
            except ProviderError as exc:
                return str(exc)
            return None
        values = {name: "''" for name in CLI_PLACEHOLDERS}
        values["EVAL_ID"] = "healthcheck"
        command = render(check["command"], values)
        # AgentV: `cwd: healthcheck.cwd ?? config.cwd`: without its own `cwd` the check runs where the
        # agent runs, so `test -f agent.py` looks in the agent's folder, not the eval file's.
        folder = check["cwd"] if check["cwd"] is not None else self.cwd
        result = run_script(
            ["/bin/sh", "-c", command], "", check["timeout"],
            cwd=resolve_folder(folder, eval_dir, lambda: self.target.repo_root), env=self.env or None
        )
        failure = self._failure(result, check["timeout"])
        return f"{prefix}: {failure}" if failure else None

    def _failure(self, result: ScriptResult, timeout: float) -> str | None:
        if result.spawn_error:
            return self.target.redact(result.spawn_error)
        if result.timed_out:
            return f"timed out after {timeout:g}s (the command and its children were killed)"
        if result.exit_code != 0:
            # Redacted whole, then cut: a key the cut falls inside of would no longer be recognised.
            detail = self.target.redact(result.stderr.strip() or result.stdout.strip())[-_DETAIL_CHARS:]
            reason = result.failure() or f"exited with code {result.exit_code}"
            return self.target.redact(f"{detail} ({reason})" if detail else f"command {reason}")
        return None

    def _read_output_file(self, output_file: Path) -> str:
        """The answer from `{OUTPUT_FILE}`, refused (not cut) when it is over `max_response_bytes`."""
        try:
            with output_file.open("rb") as handle:
                data = handle.read(self.max_response_bytes + 1)
        except FileNotFoundError:
            raise ProviderError(
                f"{self.target.describe()}: the command exited 0 but wrote no {{OUTPUT_FILE}} "
                f"(expected the answer in {output_file})"
            ) from None
        if len(data) > self.max_response_bytes:
            raise ProviderError(
                f"{self.target.describe()}: the answer in {{OUTPUT_FILE}} was more than {self.max_response_bytes} "
                "bytes; raise max_response_bytes if that is expected"
            )
        return data.decode("utf-8", errors="replace")

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        eval_dir = request.run.eval_dir if request.run is not None else None
        # AgentV: `request.cwd ?? config.cwd`: a case's workspace copy wins over the target's cwd
        workspace = request.run.workspace_path if request.run is not None else None
        cwd = Path(workspace) if workspace else resolve_folder(self.cwd, eval_dir, lambda: self.target.repo_root)
        self._ensure_healthy(eval_dir)
        if not self.keep_temp_files and not _FILE_PLACEHOLDERS & set(_PLACEHOLDER.findall(self.command_template)):
            # A command naming neither file never sees the folder that holds them: no folder, no files (a
            # mkdir, a write and a removal a case, most of it the kernel's, on the run's shared cores).
            return self._invoke(request, cwd, None)
        workdir = Path(tempfile.mkdtemp(prefix="agentv-gate-cli-"))
        try:
            return self._invoke(request, cwd, workdir)
        finally:
            if not self.keep_temp_files:
                shutil.rmtree(workdir, ignore_errors=True)

    def _invoke(self, request: ProviderRequest, cwd: Path | None, workdir: Path | None) -> TargetResponse:
        """`workdir` None: the command names neither `{PROMPT_FILE}` nor `{OUTPUT_FILE}`, so neither is made."""
        safe_id = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.eval_case_id or "case")[:80]
        prompt_file = workdir / f"{safe_id}.prompt.txt" if workdir is not None else Path()
        output_file = workdir / f"{safe_id}.output.json" if workdir is not None else Path()
        if workdir is not None:
            prompt_file.write_text(request.question, encoding="utf-8")
        files = list(dict.fromkeys(os.path.abspath(f) for f in request.input_files))
        values = {
            "PROMPT": shlex.quote(request.question),
            "PROMPT_FILE": shlex.quote(str(prompt_file)),
            "GUIDELINES": "''",
            "EVAL_ID": shlex.quote(request.eval_case_id or ""),
            "ATTEMPT": shlex.quote(str(request.attempt)),
            "FILES": " ".join(
                self.files_format.replace("{path}", shlex.quote(f)).replace(
                    "{basename}", shlex.quote(Path(f).name)
                )
                for f in files
            ),
            "OUTPUT_FILE": shlex.quote(str(output_file)),
        }
        command = render(self.command_template, values)
        started = time.monotonic()
        result = run_script(
            ["/bin/sh", "-c", command], request.question, self.timeout_seconds, cwd=cwd, env=self.env or None,
            max_output_bytes=self.max_response_bytes,
        )
        failure = self._failure(result, self.timeout_seconds)
        if failure:
            raise ProviderError(f"{self.target.describe()}: {failure}")
        if "{OUTPUT_FILE}" in self.command_template:
            produced = self._read_output_file(output_file)
        else:
            if result.stdout_truncated:
                # Judged on what fit, a cut answer could pass `contains`: the case is an error instead.
                raise ProviderError(
                    f"{self.target.describe()}: the answer on stdout was more than {self.max_response_bytes} "
                    f"bytes ({result.stdout_bytes}); raise max_response_bytes if that is expected"
                )
            produced = result.stdout
        text, messages, metrics = parse_cli_output(produced, verbatim="{OUTPUT_FILE}" in self.command_template)
        reported = metrics.get("error")
        if reported is not None and not (isinstance(reported, str) and not js_trim(reported)):
            # AgentV 4 marks the run failed (`target_task_failure`); an answer the agent itself says
            # is a failure must not be scored, let alone pass.
            detail = reported if isinstance(reported, str) else json.dumps(reported, default=str)
            raise ProviderError(f"{self.target.describe()}: the agent reported an error: "
                                f"{self.target.redact(detail)[:_DETAIL_CHARS]}")
        duration = metrics.get("duration_ms")
        return TargetResponse(
            text=text,
            output_messages=messages,
            token_usage=metrics.get("token_usage") if isinstance(metrics.get("token_usage"), dict) else None,
            cost_usd=metrics.get("cost_usd") if isinstance(metrics.get("cost_usd"), (int, float)) else None,
            duration_ms=int(duration)
            if isinstance(duration, (int, float)) and duration >= 0
            else int((time.monotonic() - started) * 1000),
            raw={
                "command": self.target.redact(command)[:_DETAIL_CHARS],
                "exit_code": result.exit_code,
                "stderr": self.target.redact(result.stderr)[-_DETAIL_CHARS:],
                **({"cwd": str(cwd)} if cwd is not None else {}),  # where its answer's file paths are read
            },
        )
