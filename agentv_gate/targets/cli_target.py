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
the template names it (as AgentV does), else from stdout. If the answer is a JSON object with
`text`, `output` or `output_messages` (AgentV's CLI output schema), those fields are used,
along with `token_usage`, `cost_usd` and `duration_ms`; anything else is the answer verbatim.

The command runs under `/bin/sh -c` in its own process group, which is killed at the timeout,
exactly as from the user's shell: PATH and every variable as agentv-gate received them, plus only
the target's `env:`. It is the system under test, so it is always started afresh, never forked
from a warm interpreter, and nothing of agentv-gate's own (its interpreter, the judges' SDK
path) is put in front of it.
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
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import ProviderError, TargetsConfigError
from ..models import Message, TargetResponse
from ..transport.process import ScriptResult, run_script
from .base import ProviderRequest
from .config import TargetConfig, response_byte_cap

COMMAND_KEYS = ("command", "command_template", "commandTemplate")
"""Where a cli target's (and its healthcheck's) command is read: AgentV 2.8+ first, then the older names."""
HEALTHCHECK_KEYS = ("type", "url", "cwd", "timeout_seconds", "timeoutSeconds", *COMMAND_KEYS)
"""Every key a `healthcheck:` mapping may hold."""
CLI_PLACEHOLDERS = ("PROMPT", "PROMPT_FILE", "GUIDELINES", "EVAL_ID", "ATTEMPT", "FILES", "OUTPUT_FILE")
DEFAULT_TIMEOUT_SECONDS = 120.0
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
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


def resolve_folder(folder: str | None, eval_dir: str | None, fallback: Path) -> Path | None:
    """A target's `cwd` as AgentV reads it: absolute as written, relative from the running case's
    eval-file folder (else `fallback`); no `cwd` means the eval file's folder."""
    if folder is None:
        return Path(eval_dir) if eval_dir else None
    path = Path(folder).expanduser()
    if path.is_absolute():
        return path
    return ((Path(eval_dir) if eval_dir else fallback) / path).resolve()


def _seconds(target: TargetConfig, value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TargetsConfigError(
            f"{target.describe()}: {key} must be a positive number of seconds, got {value!r}"
        )
    return float(value)


def _messages_from(raw: Any) -> list[Message]:
    out: list[Message] = []
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("role"), str):
                out.append(Message.model_validate(item))
    return out


def parse_cli_output(text: str) -> tuple[str, list[Message], dict[str, Any]]:
    """(answer text, output messages, metrics) from what the command produced."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):  # not JSON (or nested past Python's stack): a plain answer
            data = None
        if isinstance(data, dict) and any(k in data for k in ("text", "output", "output_messages")):
            messages = _messages_from(data.get("output_messages", data.get("output")))
            answer = data.get("text")
            if answer is None:
                assistant = [m for m in messages if m.role == "assistant"]
                answer = assistant[-1].text() if assistant else ""
            if not isinstance(answer, str):
                answer = json.dumps(answer)
            if not messages:
                messages = [Message(role="assistant", content=answer)]
            metrics = {k: data[k] for k in ("token_usage", "cost_usd", "duration_ms") if k in data}
            return answer, messages, metrics
    return stripped, [Message(role="assistant", content=stripped)], {}


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
        self.command_template = _template(target.require("command or command_template", *COMMAND_KEYS), target.describe())
        check_placeholders(self.command_template, f"{target.describe()}: command")
        timeout = target.get("timeout_seconds", "timeoutSeconds")
        self.timeout_seconds = (
            DEFAULT_TIMEOUT_SECONDS if timeout is None else _seconds(target, timeout, "timeout_seconds")
        )
        self.files_format = str(
            target.get(
                "files_format", "filesFormat", "attachments_format", "attachmentsFormat", default="{path}"
            )
        )
        cwd = target.get("cwd")
        self.cwd = None if cwd is None else str(cwd)
        env = target.get("env", default={})
        if not isinstance(env, dict):
            raise TargetsConfigError(f"{target.describe()}: env must be a mapping of variable to value")
        self.env = {str(k): _env_text(str(k), v, target.describe()) for k, v in env.items()}
        keep = target.get("keep_temp_files", "keepTempFiles", "keep_output_files", "keepOutputFiles", default=False)
        if not isinstance(keep, bool):
            raise TargetsConfigError(f"{target.describe()}: keep_temp_files must be true or false, got {keep!r}")
        self.keep_temp_files = keep
        self.max_response_bytes = response_byte_cap(target)
        self.healthcheck = self._healthcheck(target.get("healthcheck"))
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
        kind = raw.get("type")
        if kind is None:
            kind = "http" if "url" in raw else "command" if any(k in raw for k in COMMAND_KEYS) else None
        if kind not in ("command", "http"):
            raise TargetsConfigError(f"{where} must have 'command' (a command check) or 'url' (an HTTP check)"
                                     + (f", got type {raw['type']!r}" if "type" in raw else ""))
        timeout = raw.get("timeout_seconds", raw.get("timeoutSeconds"))
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
            command = next((raw[k] for k in COMMAND_KEYS if raw.get(k) is not None), None)
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
            from ..transport.http import http_call
            from .openai_compat import retry_policy_for

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
        result = run_script(
            ["/bin/sh", "-c", command], "", check["timeout"],
            cwd=resolve_folder(check["cwd"], eval_dir, self.target.repo_root), env=self.env or None
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
        eval_dir = request.extra.get("eval_dir")
        cwd = resolve_folder(self.cwd, eval_dir, self.target.repo_root)
        self._ensure_healthy(eval_dir)
        workdir = Path(tempfile.mkdtemp(prefix="agentv-gate-cli-"))
        try:
            return self._invoke(request, cwd, workdir)
        finally:
            if not self.keep_temp_files:
                shutil.rmtree(workdir, ignore_errors=True)

    def _invoke(self, request: ProviderRequest, cwd: Path | None, workdir: Path) -> TargetResponse:
        safe_id = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.eval_case_id or "case")[:80]
        prompt_file = workdir / f"{safe_id}.prompt.txt"
        output_file = workdir / f"{safe_id}.output.json"
        prompt_file.write_text(request.question, encoding="utf-8")
        files = list(dict.fromkeys(os.path.abspath(f) for f in request.input_files))
        values = {
            "PROMPT": shlex.quote(request.question),
            "PROMPT_FILE": shlex.quote(str(prompt_file)),
            "GUIDELINES": "''",
            "EVAL_ID": shlex.quote(request.eval_case_id or ""),
            "ATTEMPT": shlex.quote(str(request.extra.get("attempt", 0))),
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
        text, messages, metrics = parse_cli_output(produced)
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
            },
        )
