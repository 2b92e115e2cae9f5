"""A code judge's `target:`: the loopback proxy to the judge model, the SDK's TargetClient, and the
whole path through `agentv-gate run` (real CLI process, real judge scripts, real loopback model)."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentv_gate.cli import main
from agentv_gate.evaluators.code_judge import CodeJudgeEvaluator
from agentv_gate.evaluators.target_proxy import TargetProxy
from agentv_gate.models import CodeJudgeConfig, EvaluationContext, TargetAccessConfig
from agentv_gate.sdk import TargetAccessError, TargetClient
from agentv_gate.targets.base import Provider
from agentv_gate.targets.config import RawTarget, resolve_target
from agentv_gate.targets.registry import build_provider
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, read_rows, rows_by_id
from tests.test_sdk import capital_case

SECRET = "sk-proxy-SECRET-0123456789"
CHAT = "/v1/chat/completions"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 5}
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def says_yes_to_paris(request: RecordedRequest) -> FakeReply:
    """The judge model: YES when the question it is asked mentions Paris, else NO."""
    messages = (request.json or {}).get("messages", [])
    question = messages[-1]["content"] if messages else ""
    return FakeReply.openai("YES" if "Paris" in question else "NO")


@pytest.fixture
def server(fake_llm: FakeLLMServer) -> FakeLLMServer:
    """The shared fake model server, as a judge that says YES to a question naming Paris."""
    fake_llm.set_default(CHAT, says_yes_to_paris)
    return fake_llm


def judge_provider(server: FakeLLMServer) -> Provider:
    data = {"provider": "openai", "base_url": server.url, "api_key": "${{ JUDGE_KEY }}", "model": "gpt-judge", **FAST}
    return build_provider(resolve_target(RawTarget(name="judge", data=data), {"JUDGE_KEY": SECRET}))


def call(proxy: TargetProxy, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token != "":
        headers["Authorization"] = f"Bearer {proxy.token if token is None else token}"
    request = urllib.request.Request(f"{proxy.url}{path}", data=data, method=method, headers=headers)
    try:
        with NO_PROXY.open(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


# ---------------------------------------------------------------- the proxy's protocol


def test_invoke_goes_to_the_judge_model_and_answers_as_agentv_does(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 5, case_id="capital", evaluator="recall") as proxy:
        assert proxy.url.startswith("http://127.0.0.1:")
        status, reply = call(proxy, "POST", "/invoke", {"question": "Is Paris named?", "systemPrompt": "YES or NO."})
        assert status == 200
        assert reply == {"output": [{"role": "assistant", "content": "YES"}], "rawText": "YES",
                         "tokenUsage": {"input": 11, "output": 7}}
        assert call(proxy, "GET", "/info") == (200, {"targetName": "judge", "maxCalls": 5, "callCount": 1,
                                                     "availableTargets": ["judge"]})
        assert set(proxy.env()) == {"AGENTV_TARGET_PROXY_URL", "AGENTV_TARGET_PROXY_TOKEN"}
        assert SECRET not in json.dumps(proxy.env())
    [sent] = server.requests
    assert sent.json["messages"] == [{"role": "system", "content": "YES or NO."},
                                     {"role": "user", "content": "Is Paris named?"}]
    assert sent.headers["authorization"] == f"Bearer {SECRET}"  # the key stays between us and the model
    assert proxy.usage.as_raw() == {"target": "judge", "max_calls": 5, "call_count": 1,
                                    "token_usage": {"input": 11, "output": 7}}


def test_every_endpoint_wants_the_token_of_this_run(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e") as proxy:
        other = TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e")
        assert other.token != proxy.token
        for token in ("", "wrong", other.token):
            assert call(proxy, "GET", "/info", token=token)[0] == 401
            assert call(proxy, "POST", "/invoke", {"question": "Paris?"}, token=token)[0] == 401
    assert server.requests == []


def test_calls_past_max_calls_are_refused_with_429(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 2, case_id="c", evaluator="e") as proxy:
        assert [call(proxy, "POST", "/invoke", {"question": f"q{i}", "attempt": i + 1})[0] for i in range(3)] == [
            200, 200, 429]
        status, reply = call(proxy, "POST", "/invoke", {"question": "again"})
        assert status == 429 and reply["error"] == "Max calls exceeded (limit: 2, made: 2)"
    assert len(server.requests) == 2
    assert proxy.usage.as_raw()["refused_calls"] == 2


@pytest.mark.parametrize("body, said", [
    ({"systemPrompt": "x"}, "Missing required field: question"),
    ({"question": "q", "temperature": 0}, "unknown field 'temperature'"),
    ({"question": "q", "target": "gpt-big"}, "Unknown target 'gpt-big'. Available: judge"),
    ({"question": "q", "attempt": 0}, "attempt must be a whole number >= 1"),
    (["q"], "expected a JSON object"),
])
def test_a_request_it_does_not_understand_is_a_400_naming_why(server: FakeLLMServer, body: Any, said: str) -> None:
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e") as proxy:
        status, reply = call(proxy, "POST", "/invoke", body)
        assert status == 400 and said in reply["error"]
        assert call(proxy, "GET", "/nowhere")[0] == 404
    assert server.requests == [] and proxy.usage.call_count == 0


def test_batch_answers_each_item_and_refuses_a_batch_over_the_limit_whole(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 3, case_id="c", evaluator="e") as proxy:
        status, reply = call(proxy, "POST", "/invokeBatch", {"requests": [
            {"question": "Paris?"}, {"nope": 1}, {"question": "Lyon?"}]})
        assert status == 200
        texts = [item["rawText"] for item in reply["responses"]]
        assert texts[0] == "YES" and texts[2] == "NO"
        assert texts[1].startswith("Error: requests[1]: unknown field 'nope'") and "error" in reply["responses"][1]
        status, reply = call(proxy, "POST", "/invokeBatch", {"requests": [{"question": "a"}, {"question": "b"}]})
        assert status == 429 and "batch: 2" in reply["error"]
    assert len(server.requests) == 2
    assert proxy.usage.as_raw()["refused_calls"] == 2  # every call of the refused batch, not one per batch


def test_a_failing_model_is_a_502_quoting_it_with_the_key_scrubbed(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(401, f"Incorrect API key provided: {SECRET}"))
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e") as proxy:
        status, reply = call(proxy, "POST", "/invoke", {"question": "Paris?"})
    assert status == 502 and "judge target 'judge' failed" in reply["error"] and "HTTP 401" in reply["error"]
    assert SECRET not in reply["error"] and SECRET not in json.dumps(proxy.usage.as_raw())
    assert proxy.usage.as_raw()["failed_calls"] == 1


def test_a_successful_reply_echoing_the_key_reaches_the_judge_scrubbed(server: FakeLLMServer) -> None:
    """The judge script is the code under review: a model that echoes the key it was sent (a
    debugging endpoint, a prompt that asks for the headers) must not hand it the key in `rawText`."""
    server.set_default(CHAT, lambda _: FakeReply.openai(f"YES, and your key is {SECRET}"))
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e") as proxy:
        status, reply = call(proxy, "POST", "/invoke", {"question": "Paris?"})
        batch_status, batch = call(proxy, "POST", "/invokeBatch", {"requests": [{"question": "Paris?", "attempt": 2}]})
    assert (status, batch_status) == (200, 200)
    assert SECRET not in json.dumps(reply) + json.dumps(batch)
    assert reply["rawText"] == "YES, and your key is ***"
    assert reply["output"] == [{"role": "assistant", "content": "YES, and your key is ***"}]
    assert batch["responses"][0]["rawText"] == "YES, and your key is ***"


def test_retries_of_the_model_call_are_counted(server: FakeLLMServer) -> None:
    server.enqueue(CHAT, FakeReply.error(503, "busy"), FakeReply.openai("YES"))
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e") as proxy:
        assert call(proxy, "POST", "/invoke", {"question": "Paris?"})[1]["rawText"] == "YES"
    assert proxy.usage.retries == 1


def test_the_token_is_worthless_once_the_judge_is_done(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e") as proxy:
        url, token = proxy.url, proxy.token
    with pytest.raises(TargetAccessError, match="cannot reach the target proxy"):
        TargetClient(url, token, timeout_seconds=5).info()


# ---------------------------------------------------------------- the SDK's client


def test_sdk_client_invokes_batches_and_raises_with_the_proxys_reason(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 3, case_id="c", evaluator="e") as proxy:
        client = TargetClient(proxy.url, proxy.token)
        reply = client.invoke("Is Paris named?", system_prompt="YES or NO.")
        assert reply.text == "YES" and reply.output[-1]["content"] == "YES" and reply.token_usage == {"input": 11, "output": 7}
        assert [r.text for r in client.invoke_batch(["Paris?", {"question": "Lyon?", "attempt": 2}])] == ["YES", "NO"]
        assert client.info()["callCount"] == 3
        with pytest.raises(TargetAccessError, match="HTTP 429: Max calls exceeded") as caught:
            client.invoke("one more")
        assert caught.value.status == 429
        with pytest.raises(TargetAccessError, match="HTTP 401"):
            TargetClient(proxy.url, "not-the-token").info()


def test_sdk_client_without_target_access_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTV_TARGET_PROXY_URL", raising=False)
    monkeypatch.delenv("AGENTV_TARGET_PROXY_TOKEN", raising=False)
    with pytest.raises(TargetAccessError, match=r"add `target: true`"):
        TargetClient()


# ---------------------------------------------------------------- the code judge's side, in process

ASK_THEN_FAIL = """\
from agentv_gate.sdk import TargetClient
TargetClient().invoke("Is Paris the capital of France?")
raise SystemExit("the rubric file is missing")
"""


def test_a_code_judge_s_model_calls_add_their_retries_and_a_judge_target_that_fails_is_its_error(
        server: FakeLLMServer, tmp_path: Path) -> None:
    """A judge that asked the model (answered after one retry) and then failed: its error, exit code
    and the proxy's usage are all kept, and the retry counts as the judge's."""
    argv = [sys.executable, str(write(tmp_path / "ask.py", ASK_THEN_FAIL))]
    config = CodeJudgeConfig(name="ask", script=argv, resolved_script=argv, target=TargetAccessConfig(max_calls=2))
    context = EvaluationContext(eval_case=capital_case(), candidate="Paris", evaluator=config)
    server.enqueue(CHAT, FakeReply.error(503, "busy"), FakeReply.openai("YES"))
    score = CodeJudgeEvaluator(resolve_judge_provider=lambda _: judge_provider(server)).evaluate(config, context)
    what = f"judge 'ask' ({Path(sys.executable).name})"
    assert (score.score, score.error, score.retries) == (0.0, f"{what} exited with code 1", 1)
    assert "stderr: the rubric file is missing" in score.misses
    raw = score.evaluator_raw_request or {}
    assert (raw["exit_code"], raw["error"]) == (1, f"{what} exited with code 1")
    assert raw["target_proxy"] == {"target": "judge", "max_calls": 2, "call_count": 1,
                                   "token_usage": {"input": 11, "output": 7}}

    def broken(_: EvaluationContext) -> Provider:
        raise ValueError("judge_target 'gone' is not in .agentv/targets.yaml")

    for resolver, said in [
        (broken, f"{what} has target: but its judge target cannot be used: judge_target 'gone' is not in "
                 ".agentv/targets.yaml"),
        (lambda _: None, f"{what} has target: but no judge target is configured: set judge_target on target "
                         "'(unnamed)' in .agentv/targets.yaml"),
    ]:
        refused = CodeJudgeEvaluator(resolve_judge_provider=resolver).evaluate(config, context)
        assert (refused.score, refused.error, refused.misses) == (0.0, said, [f"Code evaluator failed: {said}"])
    assert len(server.requests) == 2  # the script never ran without its model


# ---------------------------------------------------------------- through `agentv-gate run`

RECALL_JUDGE = """\
from agentv_gate.sdk import CodeJudgeInput, TargetClient, define_code_judge


@define_code_judge
def judge(payload: CodeJudgeInput) -> dict:
    client = TargetClient()
    calls = int((payload.config or {}).get("calls", 1))
    replies = [client.invoke(f"Does this answer name the capital? {payload.answer}", system_prompt="Answer YES or NO.",
                             attempt=i + 1) for i in range(calls)]
    ok = all(r.text.strip() == "YES" for r in replies)
    return {"score": 1.0 if ok else 0.0, "hits": ["the judge model says it names Paris"] if ok else [],
            "misses": [] if ok else ["the judge model says it does not name Paris"]}
"""


def make_project(root: Path, server: FakeLLMServer, cases: str, agent: dict[str, Any] | None = None) -> Path:
    default = agent or {"provider": "mock", "judge_target": "judge",
                        "responses": {"paris": "It is Paris.", "lyon": "It is Lyon.", "greedy": "Paris."}}
    targets = [{"name": "default", **default},
               {"name": "judge", "provider": "openai", "base_url": server.url, "api_key": "${{ JUDGE_KEY }}",
                "model": "gpt-judge", **FAST}]
    make_repo(root, yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(root / "evals/recall.py", RECALL_JUDGE)
    write(root / "evals/recall.eval.yaml", cases)
    return root


def gate(project: Path, *args: str) -> tuple[int, str]:
    """`agentv-gate ARGS` with the judge's key set and no proxy inherited from a run around this one."""
    done = run_cli(*args, cwd=project, env={"JUDGE_KEY": SECRET}, drop=("AGENTV_TARGET_PROXY",), timeout=120)
    return done.returncode, done.stdout + done.stderr


CASES = """\
    tests:
      - id: paris
        input: Capital of France?
        assert:
          - {name: recall, type: code-judge, command: [python3, recall.py], target: {max_calls: 2}}
      - id: lyon
        input: Capital of France?
        assert:
          - {name: recall, type: code_judge, script: [python3, recall.py], target: true}
      - id: greedy
        input: Capital of France?
        assert:
          - name: recall
            type: code_judge
            script: [python3, recall.py]
            target: {max_calls: 2}
            calls: 3
    """


def test_cli_a_judge_with_target_passes_fails_and_errors_on_its_limit_then_replays_from_cache(
        tmp_path: Path, server: FakeLLMServer) -> None:
    project = make_project(tmp_path, server, CASES)
    code, output = gate(project, "run", "evals")
    assert code == 1, output
    result = rows_by_id(project / RESULTS)
    assert result["paris"]["verdict"] == "pass" and result["paris"]["score"] == 1.0, output
    assert result["paris"]["hits"] == ["the judge model says it names Paris"]
    assert result["paris"]["evaluator_raw_request"]["target_proxy"] == {
        "target": "judge", "max_calls": 2, "call_count": 1, "token_usage": {"input": 11, "output": 7}}
    assert result["lyon"]["verdict"] == "fail" and result["lyon"]["score"] == 0.0
    assert result["lyon"]["evaluator_raw_request"]["target_proxy"]["max_calls"] == 50
    greedy = result["greedy"]
    assert greedy["verdict"] == "error" and "exited with code 1" in greedy["error"]
    assert any("HTTP 429: Max calls exceeded (limit: 2, made: 2)" in miss for miss in greedy["misses"])
    assert greedy["evaluator_raw_request"]["target_proxy"]["refused_calls"] == 1
    asked = [r.json["messages"][-1]["content"] for r in server.requests]
    question = "Does this answer name the capital? "
    assert sorted(asked) == sorted(question + answer for answer in ("It is Paris.", "It is Lyon.", "Paris.", "Paris."))
    everything = output + (project / ".agentv-gate/results.jsonl").read_text()
    assert SECRET not in everything

    sent = len(server.requests)
    code, output = gate(project, "run", "evals")
    assert code == 1 and len(server.requests) == sent, output  # every judge-model call replayed from the cache
    again = rows_by_id(project / RESULTS)
    assert again["paris"]["verdict"] == "pass" and again["paris"]["cache_hits"] == 1
    assert again["paris"]["evaluator_raw_request"]["target_proxy"]["cache_hits"] == 1
    assert again["lyon"]["verdict"] == "fail" and again["lyon"]["cache_hits"] == 1


def test_cli_a_judge_with_target_and_no_judge_model_is_an_error_and_its_script_never_runs(
        tmp_path: Path, server: FakeLLMServer) -> None:
    agent = {"provider": "cli", "command_template": "echo Paris"}  # an agent, and no judge_target
    project = make_project(tmp_path, server, """\
        tests:
          - id: paris
            input: Capital of France?
            assert:
              - {name: recall, type: code_judge, script: [python3, recall.py], target: true}
        """, agent=agent)
    code, output = gate(project, "run", "evals")
    [row] = rows_by_id(project / RESULTS).values()
    assert code == 1 and row["verdict"] == "error", output
    assert "has target: but no judge target is configured: set judge_target on target 'default'" in row["error"]
    assert server.requests == []


@pytest.mark.parametrize("target, said", [
    ("5", "target must be true or a mapping, got 5"),
    ("{max_call: 3}", "target.max_call: Extra inputs are not permitted"),
    ("{max_calls: -1}", "target.max_calls: Input should be greater than or equal to 0"),
    ("{max_calls: 2.5}", "target.max_calls: Input should be a valid integer"),
    ("{max_calls: 20}", None),
    ("true", None),
    ("false", None),
])
def test_validate_points_at_a_target_it_cannot_use(tmp_path: Path, server: FakeLLMServer, target: str,
                                                   said: str | None, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    project = make_project(tmp_path, server, f"""\
        tests:
          - id: paris
            input: Capital of France?
            assert:
              - name: recall
                type: code_judge
                script: [python3, recall.py]
                target: {target}
        """)
    monkeypatch.chdir(project)
    code = main(["validate", "evals"])
    output = capsys.readouterr()
    if said is None:
        assert code == 0 and "recall.eval.yaml" not in output.out, output
    else:
        assert code == 1, output
        assert f"recall.eval.yaml:8: code_judge 'recall': {said}" in output.out


def test_cli_execution_cache_false_sends_every_judge_model_call_again(tmp_path: Path, server: FakeLLMServer) -> None:
    """A suite's `execution.cache: false` reaches the proxy's own threads: no judge-model call of the
    second run is answered from the first run's cache (a cached suite beside it still is)."""
    project = make_project(tmp_path, server, """\
        execution: {cache: false}
        tests:
          - id: paris
            input: Capital of France?
            assert:
              - {name: recall, type: code_judge, script: [python3, recall.py], target: true}
    """)
    write(project / "evals/cached.eval.yaml", """\
        tests:
          - id: paris
            input: Capital of France?
            assert:
              - {name: recall, type: code_judge, script: [python3, recall.py], target: true}
    """)
    for run in (1, 2):
        code, output = gate(project, "run", "evals")
        assert code == 0, output
        rows = {row["suite"]: row for row in read_rows(project / RESULTS)}
        uncached, cached = rows["evals/recall.eval.yaml"], rows["evals/cached.eval.yaml"]
        assert uncached["verdict"] == "pass" and not uncached.get("cache_hits"), uncached
        assert "cache_hits" not in uncached["evaluator_raw_request"]["target_proxy"]
        assert (cached.get("cache_hits") == 1) is (run == 2)
    assert len(server.requests) == 3  # the uncached suite's call, twice; the cached suite's, once


def test_a_batch_without_requests_is_a_400_and_an_unknown_post_a_404(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e") as proxy:
        status, reply = call(proxy, "POST", "/invokeBatch", {"items": []})
        assert (status, reply["error"]) == (400, "Missing required field: requests (array)")
        assert call(proxy, "POST", "/zzz", {"question": "q"})[0] == 404
    assert server.requests == []


# ---------------------------------------------------------------- naming another target (AgentV 2.19's resolver)

NAMING_JUDGE = """\
import json
from agentv_gate.sdk import TargetAccessError, TargetClient, define_code_judge


@define_code_judge
def judge(payload):
    client = TargetClient()
    seen = {"available": client.info()["availableTargets"]}
    seen["other"] = client.invoke("Is Paris named? " + payload.answer, target="other").text
    seen["batch"] = [r.text or r.error for r in client.invoke_batch([
        {"question": "Paris?", "target": "other"}, {"question": "Paris?"}, {"question": "Paris?", "target": "nope"}])]
    for name in ("offline", "nope"):
        try:
            client.invoke("Paris?", target=name)
        except TargetAccessError as exc:
            seen[name] = str(exc)
    ok = seen["other"] == "YES"
    return {"score": 1.0 if ok else 0.0, "hits": ["other target says YES"] if ok else [],
            "misses": [] if ok else ["other target did not answer"], "details": seen}
"""

OTHER_SECRET = "sk-other-SECRET-9876543210"


def test_cli_a_judge_may_name_any_target_of_the_file_as_in_agentv(tmp_path: Path, server: FakeLLMServer) -> None:
    """AgentV 2.19's proxy answers a call naming any target of targets.yaml (the contextual-precision
    example asks `gemini_base` while its judge target is `azure-base`): the named target's model
    answers, with its own key, never shown to the script; a target whose variables are unset is a
    500 naming the variable; an unknown one a 400 listing AgentV's list. One limit for them all."""
    targets = [{"name": "default", "provider": "mock", "judge_target": "judge", "responses": {"p": "It is Paris."}},
               {"name": "judge", "provider": "openai", "base_url": server.url, "api_key": "${{ JUDGE_KEY }}",
                "model": "gpt-judge", **FAST},
               {"name": "other", "provider": "openai", "base_url": server.url, "api_key": "${{ OTHER_KEY }}",
                "model": "gpt-other", **FAST},
               {"name": "offline", "provider": "openai", "base_url": server.url,
                "api_key": "${{ NEVER_SET_KEY_FOR_PROXY_TEST }}", "model": "gpt-off", **FAST}]
    make_repo(tmp_path, yaml.safe_dump({"targets": targets}, sort_keys=False))
    write(tmp_path / "evals/naming.py", NAMING_JUDGE)
    write(tmp_path / "evals/naming.eval.yaml", """\
        tests:
          - id: p
            input: Capital of France?
            assert:
              - {name: naming, type: code_judge, script: [python3, naming.py], target: {max_calls: 4}}
        """)
    done = run_cli("run", "evals", cwd=tmp_path, env={"JUDGE_KEY": SECRET, "OTHER_KEY": OTHER_SECRET},
                   drop=("AGENTV_TARGET_PROXY", "NEVER_SET_KEY"), timeout=120)
    output = done.stdout + done.stderr
    [row] = rows_by_id(tmp_path / RESULTS).values()
    assert done.returncode == 0 and row["verdict"] == "pass", output
    [score] = row["scores"]
    seen = score["details"]
    assert seen["available"] == ["default", "default", "judge", "other", "offline"]  # AgentV's list, as it is
    assert seen["other"] == "YES"
    assert seen["batch"] == ["YES", "YES", "Error: requests[2]: Unknown target 'nope'. Available: default, default, "
                                           "judge, other, offline"]
    assert seen["offline"].startswith("POST /invoke: HTTP 500: target 'offline' cannot be used")
    assert "NEVER_SET_KEY_FOR_PROXY_TEST" in seen["offline"]
    assert seen["nope"].startswith("POST /invoke: HTTP 400: Unknown target 'nope'")
    by_model = {r.json["model"]: r.headers["authorization"] for r in server.requests}
    assert by_model == {"gpt-other": f"Bearer {OTHER_SECRET}", "gpt-judge": f"Bearer {SECRET}"}
    assert len(server.requests) == 3  # the unknown and the unusable targets were never called
    proxy = row["evaluator_raw_request"]["target_proxy"]
    assert (proxy["target"], proxy["call_count"], proxy["other_targets"]) == ("judge", 3, {"other": 2})
    everything = output + (tmp_path / RESULTS).read_text()
    assert SECRET not in everything and OTHER_SECRET not in everything


class _Targets:
    """A targets file of two: `judge` (usable) and `broken` (an unset key), for the proxy alone."""

    def __init__(self, server: FakeLLMServer) -> None:
        self.server = server

    def declared_targets(self) -> list[str]:
        return ["judge", "broken"]

    def named_provider(self, name: str) -> Provider:
        if name == "broken":
            raise ValueError("environment variable BROKEN_KEY (api_key) is not set or empty")
        return judge_provider(self.server)


def test_a_named_target_that_cannot_be_built_fails_its_whole_batch_as_in_agentv(server: FakeLLMServer) -> None:
    with TargetProxy(judge_provider(server), 5, case_id="c", evaluator="e", targets=_Targets(server),
                     case_target="default") as proxy:
        status, reply = call(proxy, "POST", "/invokeBatch", {"requests": [
            {"question": "Paris?"}, {"question": "Paris?", "target": "broken"}]})
        assert status == 500 and "requests[1]: target 'broken' cannot be used: ValueError: environment variable " \
                                  "BROKEN_KEY" in reply["error"]
        assert call(proxy, "GET", "/info")[1]["availableTargets"] == ["default", "judge", "broken"]
        ok = call(proxy, "POST", "/invokeBatch", {"requests": [{"question": "Paris?", "target": "judge"}]})
    assert ok[0] == 200 and ok[1]["responses"][0]["rawText"] == "YES"
    assert len(server.requests) == 1 and proxy.usage.call_count == 1  # the failed batch called nothing
