"""`code_judge`: any program that reads the JSON payload on stdin and prints a score on stdout.

The script is run directly from its argv (a string is shell-split by the loader, never given
to a shell), in the `cwd` the config names or else the eval file's folder. Everything a broken
judge can do - not start, hang, crash, exit non-zero, print nothing, print prose, print a score
of 7 - becomes score 0 with the reason and the judge's stderr in `misses` and `error` set, so
the case is reported as an error instead of silently passing or stopping the run.

With `target:` the script may also call the case's judge model through a loopback proxy
(`target_proxy.py`), whose URL and token it finds in `AGENTV_TARGET_PROXY_URL` /
`AGENTV_TARGET_PROXY_TOKEN`; what it did there is kept as `evaluator_raw_request.target_proxy`.

Where AgentV is laxer we are stricter on purpose: AgentV scores unparseable stdout 0 without
saying why and clamps out-of-range scores; a gate should say the judge is broken.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.defaults import DEFAULT_MAX_RESPONSE_BYTES
from ..base.generations import GENERATIONS, Generation
from ..base.jscompat import is_finite_number, js_number, js_trim
from ..judging.grader_payload import build_grader_payload
from ..judging.payload import build_judge_payload
from ..models import (
    DEFAULT_JUDGE_TIMEOUT_SECONDS,
    CodeJudgeConfig,
    CustomAssertionConfig,
    EvaluationContext,
    EvaluationScore,
    score_label,
)
from ..redaction import redact
from ..transport.process import ScriptResult, run_judge
from .base import ResolveJudgeProvider
from .grader_reply import read_grader_reply
from .json_extract import loads_strict
from .target_proxy import CaseTargets, NamedTargets, TargetProxy, targets_of_case

STDERR_TAIL_CHARS = 2000
"""AgentV keeps the last 2000 characters of a failed judge's stderr."""
NOT_CONFIG_KEYS = {"required", "negate", "min_score", "preprocessors", "target", "judge", "command",
                   "timeout"}
"""Evaluator keys AgentV keeps for itself; every other unknown key is passed to the judge as config."""
NOT_ASSERTION_CONFIG_KEYS = NOT_CONFIG_KEYS - {"target", "command"}
"""A custom assertion has no script setting nor model access: its `command` and `target` are its config."""


def judge_config(config: CodeJudgeConfig | CustomAssertionConfig) -> dict[str, Any] | None:
    """AgentV's pass-through config: unknown evaluator keys, then the explicit `config:` mapping."""
    kept = NOT_CONFIG_KEYS if isinstance(config, CodeJudgeConfig) else NOT_ASSERTION_CONFIG_KEYS
    extras = {k: v for k, v in (config.model_extra or {}).items() if k not in kept}
    merged = {**extras, **(config.config or {})}
    return merged or None


def trimmed_stderr(stderr: str) -> str:
    """The end of a judge's stderr, a key in it hidden before the cut (which would leave the key's tail,
    no longer recognised as a key, to be shown)."""
    text = redact(stderr).strip()
    if len(text) <= STDERR_TAIL_CHARS:
        return text
    return f"...(truncated, last {STDERR_TAIL_CHARS} chars)\n{text[-STDERR_TAIL_CHARS:]}"


ONE_OBJECT_HINT = " (stdout must hold one JSON object and nothing else, as AgentV reads it: write logs to stderr)"
VERDICT_RULE = (": the score decides (pass >= 0.8, borderline >= 0.6, else fail; AgentV 2.19 ignores a code "
                "judge's verdict and reports a composite aggregator's beside a score that says otherwise), so "
                "print a verdict that agrees, or none")
ASSERTIONS_SHAPE = ' (expected a list of {"text": ..., "passed": true|false, "evidence"?: ...})'


def _holds_an_object_line(text: str) -> bool:
    """Whether some line of `text` is a JSON object by itself: a result beside logs or a second result."""
    for line in text.splitlines():
        try:
            if isinstance(loads_strict(line), dict):
                return True
        except ValueError:
            continue
    return False


def _verdict_problem(data: dict[str, Any]) -> str | None:
    """A `verdict` that disagrees with the score's label. AgentV 2.19 ignores a code judge's verdict
    (the score decides) and shows a composite code aggregator's beside a score that may say
    otherwise; a judge saying `fail` beside a passing score is an error here, never a silent pass."""
    verdict = data.get("verdict")
    if verdict is None:
        return None
    label = score_label(float(data["score"]))
    if isinstance(verdict, str) and verdict.strip().lower() == label:
        return None
    shown = repr(verdict) if isinstance(verdict, str) else json.dumps(verdict)
    return f"printed verdict {shown} beside a score of {data['score']}, which AgentV labels {label!r}{VERDICT_RULE}"


def _assertions_problem(value: Any) -> str | None:
    """AgentV's `assertions: [{text, passed, evidence?}]`; anything else is said, not dropped."""
    if value is None:
        return None
    if not isinstance(value, list):
        return f"printed 'assertions' that is not a list: {type(value).__name__}{ASSERTIONS_SHAPE}"
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            return f"printed assertions[{index}] without a 'text' string{ASSERTIONS_SHAPE}"
        if not isinstance(item.get("passed"), bool):
            return f"printed assertions[{index}] without a true/false 'passed'{ASSERTIONS_SHAPE}"
    return None


def parse_judge_output(stdout: str) -> tuple[dict[str, Any] | None, str | None]:
    """(result, None) for a valid `{score, hits, misses, reasoning}`, else (None, why not).

    Like AgentV, the whole of stdout, trimmed as JavaScript trims (a byte-order mark goes too), is
    one JSON value: a log line before the result or a second object is not looked past (AgentV
    scores it 0; taking the last line could pass it).
    """
    text = js_trim(stdout)
    if not text:
        return None, "printed nothing on stdout (expected a JSON object with a score)"
    try:
        data = loads_strict(text)
    except ValueError as exc:
        preview = text[:200] + ("..." if len(text) > 200 else "")
        hint = ONE_OBJECT_HINT if _holds_an_object_line(text) else ""
        return None, f"printed something that is not JSON ({exc}): {preview!r}{hint}"
    if not isinstance(data, dict):
        return None, f"printed a JSON {type(data).__name__}, expected an object with a score"
    if "score" not in data:
        return None, "printed JSON without a 'score' field"
    score = data["score"]
    if not is_finite_number(score):
        return None, f"printed a score that is not a number: {js_number(score)!r}"
    if not 0.0 <= score <= 1.0:
        return None, f"printed a score of {score}, outside 0..1"
    problem = _verdict_problem(data) or _assertions_problem(data.get("assertions"))
    if problem is not None:
        return None, problem
    return data, None


def string_list(value: Any) -> list[str]:
    """AgentV keeps only non-empty strings from hits/misses."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str) and item.strip()]


def score_from_output(data: dict[str, Any], raw: dict[str, Any]) -> EvaluationScore:
    """A valid result as a score: AgentV 2.19's `hits` and `misses`; a judge written for AgentV 4 that
    prints only `assertions` has those as hits (passed) or misses (failed, with their evidence). A judge
    printing both (an SDK that writes both shapes) has its `hits`/`misses` only, as AgentV 2.19 reads them:
    joining both listed every hit twice. An object `details` is kept for reports, as AgentV keeps it."""
    hits, misses = string_list(data.get("hits")), string_list(data.get("misses"))
    written_2x = "hits" in data or "misses" in data
    for item in [] if written_2x else data.get("assertions") or []:
        evidence = item.get("evidence")
        text = f"{item['text']}: {evidence}" if isinstance(evidence, str) and evidence.strip() else item["text"]
        if text.strip():
            (hits if item["passed"] else misses).append(text)
    reasoning = data.get("reasoning")
    details = data.get("details")
    return EvaluationScore(score=float(data["score"]), hits=hits, misses=misses,
                           reasoning=reasoning if isinstance(reasoning, str) else None,
                           details=details if isinstance(details, dict) else None,
                           evaluator_raw_request=raw)


def failed_score(what: str, reason: str, result: ScriptResult | None, raw: dict[str, Any]) -> EvaluationScore:
    """Score 0 naming the reason; the judge's stderr and own misses ride along to explain it."""
    message = f"{what} {reason}"
    misses = [f"Code evaluator failed: {message}"]
    stderr = trimmed_stderr(result.stderr) if result is not None else ""
    if stderr:
        misses.append(f"stderr: {stderr}")
    if result is not None and result.stdout_truncated:
        misses.append(f"stdout was cut at {len(result.stdout.encode())} of {result.stdout_bytes} bytes")
    if result is not None and js_trim(result.stdout):
        try:
            own = loads_strict(js_trim(result.stdout))
            if isinstance(own, dict):
                misses.extend(string_list(own.get("misses")))
        except ValueError:
            pass
    return EvaluationScore(score=0.0, misses=misses, reasoning=message,
                           evaluator_raw_request={**raw, "error": message}, error=message)


def script_argv(config: CodeJudgeConfig, cwd: Path) -> list[str]:
    """The loader's resolved argv; for configs built in code, split and resolve against `cwd`."""
    if config.resolved_script:
        return list(config.resolved_script)
    argv = shlex.split(config.script) if isinstance(config.script, str) else [str(t) for t in config.script]
    resolved = []
    for token in argv:
        candidate = cwd / token
        is_file = not token.startswith("-") and candidate.is_file()
        resolved.append(str(candidate.resolve()) if is_file else token)
    return resolved


def judge_cwd(config: CodeJudgeConfig, context: EvaluationContext) -> Path:
    """`cwd` from the config (resolved by the loader), else the folder of the eval file, as AgentV."""
    if config.resolved_cwd is not None:
        return Path(config.resolved_cwd)
    source = config.source_file or context.eval_case.source_file
    base = Path(source).resolve().parent
    return (base / config.cwd).resolve() if config.cwd else base


ReplyReader = Callable[[ScriptResult, int], "tuple[dict[str, Any] | None, str | None]"]
"""How a judge's finished run is read: (result, stdout cap) -> (reply with a score, None) or (None, why the judge
failed). One per AgentV generation of the protocol (`CODE_WIRES`)."""


def _workspace_env(context: EvaluationContext) -> dict[str, str] | None:
    return {"AGENTV_WORKSPACE_PATH": context.run.workspace_path} if context.run.workspace_path else None


def run_judge_script(argv: list[str], stdin: str, timeout: float, cwd: Path, what: str, raw: dict[str, Any],
                     max_output_bytes: int = DEFAULT_MAX_RESPONSE_BYTES, call_env: dict[str, str] | None = None,
                     read_reply: ReplyReader | None = None) -> EvaluationScore:
    """Run a script that speaks the judge protocol and turn whatever happens into a score.

    Shared by code judges and the composite's code aggregator: a crash, timeout or unusable
    output becomes score 0 with the reason, never an exception. `call_env` is for this run only
    (the target proxy's URL and token). `read_reply` reads the finished run (default: the 2.x reply).
    """
    result = run_judge(argv, stdin, timeout, cwd=cwd, max_output_bytes=max_output_bytes, call_env=call_env)
    raw["duration_ms"] = result.duration_ms
    raw["exit_code"] = result.exit_code
    stderr = trimmed_stderr(result.stderr)
    if stderr:  # what a judge logs is how its author finds out why it scored as it did (`--verbose` shows it)
        raw["stderr"] = stderr
    data, problem = (read_reply or read_judge_reply)(result, max_output_bytes)
    if data is None:
        return failed_score(what, problem or "printed an unusable result", result, raw)
    return score_from_output(data, raw)


def read_judge_reply(result: ScriptResult, max_output_bytes: int) -> tuple[dict[str, Any] | None, str | None]:
    """AgentV 2.x's reply: exit 0 and one JSON object with a score in 0..1 (hits, misses, reasoning, details,
    assertions beside it); anything else is the judge's failure, said."""
    failure = result.failure()
    if failure is not None:
        return None, failure
    if result.stdout_truncated:
        # Judged on its first megabytes, a flood could pass: the end of it is what was meant.
        return None, (f"printed more than {max_output_bytes} bytes on stdout (the cap; it printed "
                      f"{result.stdout_bytes}), so its result cannot be read whole")
    return parse_judge_output(result.stdout)


@dataclass(frozen=True)
class CodeWire:
    """What a code judge of one AgentV generation is sent, and how its reply is read."""

    payload: Callable[[EvaluationContext, dict[str, Any] | None], dict[str, Any]]
    read_reply: ReplyReader


CODE_WIRES: dict[Generation, CodeWire] = {
    "2.x": CodeWire(payload=build_judge_payload, read_reply=read_judge_reply),
    "4.x": CodeWire(payload=build_grader_payload, read_reply=read_grader_reply),
}
"""The code-grader half of generations.py's table: the only place a generation picks a code judge's behaviour."""
assert set(CODE_WIRES) == set(GENERATIONS), "every generation in generations.py has a code-grader wire"


def _no_model(message: str, raw: dict[str, Any]) -> EvaluationScore:
    """The judge asked for model access (`target:`) and cannot have it: an error, the script not run."""
    raw["error"] = message
    return EvaluationScore(score=0.0, misses=[f"Code evaluator failed: {message}"],
                           reasoning=message, evaluator_raw_request=raw, error=message)


class CodeJudgeEvaluator:
    def __init__(self, default_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS,
                 max_output_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 resolve_judge_provider: ResolveJudgeProvider | None = None,
                 targets: NamedTargets | CaseTargets | None = None) -> None:
        self.default_timeout_seconds = default_timeout_seconds
        self.max_output_bytes = max_output_bytes
        self.resolve_judge_provider = resolve_judge_provider
        """Who answers a judge's `target:` calls: the case's judge target, as for an llm_judge."""
        self.targets = targets
        """The run's other targets, which a judge may name in a call (`target: gemini_base`), as in AgentV."""

    def evaluate(self, config: CodeJudgeConfig, context: EvaluationContext) -> EvaluationScore:
        cwd = judge_cwd(config, context)
        try:
            argv = script_argv(config, cwd)
        except ValueError as exc:
            message = f"script cannot be split into arguments: {exc}"
            return EvaluationScore(score=0.0, misses=[f"Code evaluator failed: {message}"],
                                   reasoning=message, error=message)
        timeout = config.timeout_seconds if config.timeout_seconds else self.default_timeout_seconds
        raw: dict[str, Any] = {"script": argv, "cwd": str(cwd), "timeout_seconds": timeout}
        wire = CODE_WIRES[config.generation]
        payload = wire.payload(context, judge_config(config))
        stdin = json.dumps(payload, indent=2, ensure_ascii=False, default=str)  # YAML dates become text
        what = f"judge '{config.name}' ({Path(argv[0]).name if argv else '?'})"
        # AgentV gives a judge the case's workspace copy in its environment too
        workspace_env = _workspace_env(context)
        try:
            if config.target is None:
                return run_judge_script(argv, stdin, timeout, cwd, what, raw, max_output_bytes=self.max_output_bytes,
                                        call_env=workspace_env, read_reply=wire.read_reply)
            return self._with_model_access(config, context, argv, stdin, timeout, cwd, what, raw, wire.read_reply)
        finally:
            if payload.get("output_path"):  # a 4.x answer too long to inline: its temporary folder goes
                shutil.rmtree(Path(payload["output_path"]).parent, ignore_errors=True)

    def _with_model_access(self, config: CodeJudgeConfig, context: EvaluationContext, argv: list[str], stdin: str,
                           timeout: float, cwd: Path, what: str, raw: dict[str, Any],
                           read_reply: ReplyReader) -> EvaluationScore:
        """Run the script with a target proxy to the case's judge model beside it (see target_proxy.py)."""
        assert config.target is not None
        try:
            provider = self.resolve_judge_provider(context) if self.resolve_judge_provider is not None else None
        except Exception as exc:  # noqa: BLE001 - a misconfigured judge target (any resolver's) is this case's error
            return _no_model(f"{what} has target: but its judge target cannot be used: {exc}", raw)
        if provider is None:
            return _no_model(
                f"{what} has target: but no judge target is configured: set judge_target on target "
                f"'{context.target or '(unnamed)'}' in .agentv/targets.yaml", raw)
        with TargetProxy(provider, config.target.max_calls, case_id=context.eval_case.id, evaluator=config.name,
                         model=context.judge_model, targets=targets_of_case(self.targets, context.eval_case),
                         case_target=context.target,
                         run=context.run) as proxy:
            score = run_judge_script(argv, stdin, timeout, cwd, what, raw, max_output_bytes=self.max_output_bytes,
                                     call_env={**proxy.env(), **(_workspace_env(context) or {})},
                                      read_reply=read_reply)
        recorded = {**(score.evaluator_raw_request or raw), "target_proxy": proxy.usage.as_raw()}
        return score.model_copy(update={"retries": score.retries + proxy.usage.retries,
                                        "evaluator_raw_request": recorded})
