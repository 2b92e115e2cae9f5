"""The response cache against a real loopback model server: a cached re-run makes no HTTP call.

Each test counts the requests the server actually received, so "cached" means no socket was
opened, not that some counter says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.cli import main
from agentv_gate.errors import EXIT_FAILED, EXIT_OK
from agentv_gate.models import Message, TargetResponse
from agentv_gate.targets import cache as cache_module
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.cache import (
    DEFAULT_CACHE_DIR,
    CachingProvider,
    ResponseCache,
    caching_wrapper,
    request_identity,
)
from agentv_gate.targets.config import RawTarget, resolve_target
from agentv_gate.targets.registry import build_provider
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo
from tests.helpers.reports import read_rows

SECRET = "sk-cache-SECRET-0123456789"
AGENT = "/agent/v1/chat/completions"
JUDGE = "/judge/v1/chat/completions"
VERDICT = '{"score": 1.0, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."}'
FAST = "    max_retries: 0\n    timeout_seconds: 5\n"

SUITE = """\
tests:
  - id: france
    input: What is the capital of France?
    criteria: Names Paris
  - id: france-again
    input: Capital city of France?
    criteria: Names Paris
  - id: with-assert
    input: Where is the Eiffel Tower?
    criteria: Names Paris
    assert:
      - type: contains
        value: Paris
      - type: llm_judge
        name: quality
"""


def targets_yaml(url: str, agent: str | Path = "openai") -> str:
    if isinstance(agent, Path):  # a cli agent: this script
        agent_block = (f"  - name: default\n    provider: cli\n    command_template: {sys.executable} {agent} {{PROMPT}}\n"
                       "    judge_target: grader\n")
    else:
        agent_block = (f"  - name: default\n    provider: openai\n    base_url: {url}/agent\n"
                       f"    api_key: ${{{{ CACHE_TEST_KEY }}}}\n    model: agent-model\n    judge_target: grader\n{FAST}")
    grader = (f"  - name: grader\n    provider: openai\n    base_url: {url}/judge\n"
              f"    api_key: ${{{{ CACHE_TEST_KEY }}}}\n    model: judge-model\n{FAST}")
    return "targets:\n" + agent_block + grader


@pytest.fixture
def server(fake_llm: FakeLLMServer) -> FakeLLMServer:
    """The shared loopback server, answering as the agent and as the judge."""
    fake_llm.set_default(AGENT, FakeReply.openai("Paris is the capital of France."))
    fake_llm.set_default(JUDGE, FakeReply.openai(VERDICT))
    return fake_llm


@pytest.fixture
def project(tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CACHE_TEST_KEY", SECRET)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    make_repo(tmp_path, targets_yaml(server.url))
    (tmp_path / "evals" / "geo.eval.yaml").write_text(SUITE)
    return tmp_path


def run(*extra: str, out: str = "out") -> int:
    return main(["run", "evals", "--output-dir", out, "--quiet", *extra])


def rows(project: Path, out: str = "out") -> list[dict[str, Any]]:
    return read_rows(project / out / "results.jsonl")


def verdicts(project: Path, out: str = "out") -> dict[str, tuple[str, float]]:
    return {r["eval_id"]: (r["verdict"], r["score"]) for r in rows(project, out)}


def entries(root: Path) -> list[Path]:
    return sorted(root.glob("v1/*/*.json"))


# ---------------------------------------------------------------- end to end


def test_second_run_makes_no_http_call_and_gives_the_same_results(project: Path, server: FakeLLMServer) -> None:
    assert run() == EXIT_OK
    first = server.requests
    assert len([r for r in first if r.path == AGENT]) == 3
    assert len([r for r in first if r.path == JUDGE]) == 3
    cache_root = project / DEFAULT_CACHE_DIR
    assert len(entries(cache_root)) == 6, "three answers and three verdicts, one file each"

    assert run(out="again") == EXIT_OK
    assert server.requests == first, "the cached run sent no request at all"
    assert verdicts(project, "again") == verdicts(project)
    assert all("cache_hits" not in row for row in rows(project)), "a cold run replays nothing"
    for row in rows(project, "again"):
        assert row["retries"] == 0
        assert row["candidate_answer"] == "Paris is the capital of France."
    hits = {row["eval_id"]: row["cache_hits"] for row in rows(project, "again")}
    assert hits == {"france": 2, "france-again": 2, "with-assert": 2}, "target answer and verdict, per case"

    for entry in entries(cache_root):
        text = entry.read_text()
        assert SECRET not in text, "the API key never reaches the cache"
        data = json.loads(text)
        assert data["key"] == entry.stem and data["request"]["kind"] == "openai"
    assert not list(cache_root.rglob(".*.tmp")), "no temporary file is left behind"


def test_no_cache_calls_every_time_and_writes_nothing(project: Path, server: FakeLLMServer) -> None:
    assert run("--no-cache") == EXIT_OK
    assert run("--no-cache") == EXIT_OK
    assert len(server.requests) == 12
    assert not (project / DEFAULT_CACHE_DIR).exists()


def test_cache_dir_flag_moves_the_cache(project: Path, server: FakeLLMServer) -> None:
    assert run("--cache-dir", "ci-cache/agentv") == EXIT_OK
    assert len(entries(project / "ci-cache" / "agentv")) == 6
    assert not (project / DEFAULT_CACHE_DIR).exists()
    assert run("--cache-dir", "ci-cache/agentv") == EXIT_OK
    assert len(server.requests) == 6
    assert run("--cache-dir", "elsewhere") == EXIT_OK
    assert len(server.requests) == 12, "an empty cache folder is a cold cache"


def test_a_failed_call_is_never_cached(project: Path, server: FakeLLMServer) -> None:
    server.enqueue(AGENT, FakeReply.error(400, "model overloaded"))  # one target call fails, not retried
    assert run() == EXIT_FAILED
    errored = [r for r in rows(project) if r["verdict"] == "error"]
    assert len(errored) == 1 and "model overloaded" in errored[0]["error"]
    before = len(server.requests)

    assert run(out="again") == EXIT_OK
    again = server.requests[before:]
    assert [r.path for r in again].count(AGENT) == 1, "only the failed answer is asked for again"
    assert [r.path for r in again].count(JUDGE) == 1
    assert all(v == "pass" for v, _ in verdicts(project, "again").values())


@pytest.mark.parametrize("damage", [
    lambda text: "",
    lambda text: text[: len(text) // 2],
    lambda text: "\x00\xff garbage",
    lambda text: json.dumps({**json.loads(text), "key": "0" * 64}),
    lambda text: json.dumps({**json.loads(text), "response": {"text": ["not", "a", "string"]}}),
    lambda text: "[1, 2, 3]",
])
def test_a_corrupt_entry_is_a_miss_and_is_replaced(project: Path, server: FakeLLMServer, damage: Any) -> None:
    assert run() == EXIT_OK
    cache_root = project / DEFAULT_CACHE_DIR
    for entry in entries(cache_root):
        entry.write_bytes(damage(entry.read_text()).encode("utf-8", "surrogateescape"))

    assert run(out="again") == EXIT_OK
    assert len(server.requests) == 12, "every damaged entry was asked for again"
    assert verdicts(project, "again") == verdicts(project)
    for entry in entries(cache_root):
        assert json.loads(entry.read_text())["key"] == entry.stem, "and written back whole"
    assert run(out="third") == EXIT_OK
    assert len(server.requests) == 12


def test_a_cli_target_is_never_cached_but_its_judge_is(project: Path, server: FakeLLMServer) -> None:
    (project / ".agentv" / "targets.yaml").write_text(targets_yaml(server.url, agent=project / "agent.py"))
    calls = project / "calls.log"
    (project / "agent.py").write_text(
        "import sys\n"
        f"open({str(calls)!r}, 'a').write('x\\n')\n"
        "print('Paris, naturally.')\n")
    assert run() == EXIT_OK
    assert run(out="again") == EXIT_OK
    assert len(calls.read_text().splitlines()) == 6, "the agent under test ran in both runs"
    assert [r.path for r in server.requests] == [JUDGE] * 3, "its judge was asked once per case, then replayed"
    assert [row["cache_hits"] for row in rows(project, "again")] == [1, 1, 1], "only the verdicts were replayed"


def test_an_unwritable_cache_is_reported_not_fatal(project: Path, server: FakeLLMServer,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (project / "blocked").write_text("a file where the cache folder should be")
    assert run("--cache-dir", "blocked") == EXIT_OK
    assert "not written" in capsys.readouterr().err
    assert all(v == "pass" for v, _ in verdicts(project).values())


# ---------------------------------------------------------------- what the key is made of


def provider_for(url: str, **settings: Any) -> Any:
    data = {"name": "t", "provider": "openai", "base_url": url, "api_key": "${{ KEY }}", "model": "m",
            "max_retries": 0, **settings}
    return build_provider(resolve_target(RawTarget(name="t", data=data), {"KEY": SECRET}))


def test_the_key_follows_everything_that_changes_the_answer(tmp_path: Path, server: FakeLLMServer) -> None:
    cache = ResponseCache(tmp_path / "c")
    request = ProviderRequest(question="Capital of France?", system_prompt="Be brief.", temperature=0.0,
                              max_output_tokens=50)

    def ask(provider: Any, req: ProviderRequest = request) -> TargetResponse:
        return CachingProvider(provider, cache).invoke(req)

    base = provider_for(f"{server.url}/agent")
    first = ask(base)
    assert first.raw is not None and "cached" not in first.raw
    replay = ask(base)
    assert replay.text == first.text and replay.raw is not None and replay.raw["cached"] is True
    assert replay.retries == 0
    assert len(server.requests) == 1

    other_key = build_provider(resolve_target(
        RawTarget(name="t2", data={"name": "t2", "provider": "openai", "base_url": f"{server.url}/agent",
                                   "api_key": "${{ KEY }}", "model": "m", "max_retries": 0}),
        {"KEY": "sk-a-different-key-999"}))
    ask(other_key)
    assert len(server.requests) == 1, "a rotated API key (or another target name) keeps the cache"

    variants = [
        (provider_for(f"{server.url}/agent", model="m2"), request),
        (provider_for(f"{server.url}/agent", headers={"X-Route": "eu"}), request),
        (provider_for(f"{server.url}/agent/v2"), request),
        (base, ProviderRequest(question="Capital of Spain?", system_prompt="Be brief.", temperature=0.0,
                               max_output_tokens=50)),
        (base, ProviderRequest(question="Capital of France?", system_prompt="Be verbose.", temperature=0.0,
                               max_output_tokens=50)),
        (base, ProviderRequest(question="Capital of France?", system_prompt="Be brief.", temperature=0.7,
                               max_output_tokens=50)),
        (base, ProviderRequest(question="Capital of France?", system_prompt="Be brief.", temperature=0.0,
                               max_output_tokens=51)),
        (base, ProviderRequest(question="Capital of France?", system_prompt="Be brief.", temperature=0.0,
                               max_output_tokens=50, model="m-override")),
        (base, ProviderRequest(question="Capital of France?", messages=[Message(role="user", content="other")])),
        (base, ProviderRequest(question="Capital of France?", system_prompt="Be brief.", temperature=0.0,
                               max_output_tokens=50, role="judge", attempt=1)),
    ]
    server.set_default("/agent/v2/v1/chat/completions", FakeReply.openai("v2"))
    for count, (provider, req) in enumerate(variants, start=2):
        ask(provider, req)
        assert len(server.requests) == count, f"variant {count - 1} must miss"
    assert cache.stats.hits == 2 and cache.stats.misses == len(variants) + 1


def test_credential_headers_stay_out_of_the_key(server: FakeLLMServer) -> None:
    provider = provider_for(f"{server.url}/agent", headers={"Authorization": "Bearer abc", "X-Api-Key": "k",
                                                            "OpenAI-Organization": "org-1"})
    identity = json.dumps(request_identity(provider, ProviderRequest(question="q")))
    assert "Bearer abc" not in identity and '"k"' not in identity and SECRET not in identity
    assert "org-1" in identity


def test_only_http_model_providers_are_wrapped(tmp_path: Path) -> None:
    wrap = caching_wrapper(ResponseCache(tmp_path))
    env = {"KEY": SECRET}
    kinds = {
        "openai": {"base_url": "http://127.0.0.1:9", "api_key": "${{ KEY }}", "model": "m"},
        "azure": {"endpoint": "http://127.0.0.1:9", "api_key": "${{ KEY }}", "deployment": "d"},
        "anthropic": {"base_url": "http://127.0.0.1:9", "api_key": "${{ KEY }}", "model": "m"},
        "gemini": {"base_url": "http://127.0.0.1:9", "api_key": "${{ KEY }}", "model": "m"},
        "mock": {"response": "hi"},
        "cli": {"command_template": "echo {PROMPT}"},
    }
    for kind, settings in kinds.items():
        provider = build_provider(resolve_target(RawTarget(name=kind, data={"provider": kind, **settings}), env))
        wrapped = wrap(provider)
        if kind in ("mock", "cli"):
            assert wrapped is provider, kind
        else:
            assert isinstance(wrapped, CachingProvider) and wrapped.name == kind and wrapped.kind == kind


def test_judge_reasks_replay_from_the_cache(project: Path, server: FakeLLMServer) -> None:
    """A judge that first replied prose and then a verdict: the re-run replays both, sending nothing."""
    (project / "evals" / "geo.eval.yaml").write_text(SUITE.split("  - id: france-again")[0])
    server.enqueue(JUDGE, FakeReply.openai("I think it is fine."), FakeReply.openai(VERDICT))
    assert run() == EXIT_OK
    assert [r.path for r in server.requests] == [AGENT, JUDGE, JUDGE]
    assert rows(project)[0]["retries"] == 1
    assert run(out="again") == EXIT_OK
    assert len(server.requests) == 3
    assert verdicts(project, "again") == verdicts(project)


# ---------------------------------------------------------------- concurrency


def entry_text(key: str, text: str) -> str:
    response = TargetResponse(text=text, output_messages=[Message(role="assistant", content=text)])
    return json.dumps({"format": 1, "key": key, "request": {}, "response": response.model_dump(mode="json")})


WRITER = """
import json, sys
from agentv_gate.targets.cache import ResponseCache
from agentv_gate.models import TargetResponse
cache = ResponseCache(sys.argv[1])
keys = json.loads(sys.argv[2])
for round in range(40):
    for key in keys:
        text = "x" * (1000 + round * 50)
        cache.put(key, json.dumps({"format": 1, "key": key, "request": {},
                                   "response": TargetResponse(text=text).model_dump(mode="json")}))
        got = cache.get(key)
        assert got is not None and set(got.text) == {"x"}, key
print(json.dumps({"corrupt": cache.stats.corrupt, "errors": cache.stats.write_errors}))
"""


def test_concurrent_threads_and_processes_only_ever_see_whole_entries(tmp_path: Path) -> None:
    """Shards on one machine share the folder; workers in one shard share the object."""
    root = tmp_path / "shared"
    keys = [f"{i:02x}" * 32 for i in range(6)]
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), json.dumps(keys)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
             for _ in range(2)]
    cache = ResponseCache(root)
    failures: list[str] = []

    def hammer(worker: int) -> None:
        for round_ in range(60):
            key = keys[(worker + round_) % len(keys)]
            cache.put(key, entry_text(key, "x" * (500 + worker * 100 + round_)))
            got = cache.get(key)
            if got is None or set(got.text) != {"x"}:
                failures.append(key)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert json.loads(out) == {"corrupt": 0, "errors": 0}
    assert failures == [] and cache.stats.corrupt == 0 and cache.stats.write_errors == 0
    assert sorted(p.stem for p in entries(root)) == sorted(keys)
    assert not list(root.rglob(".*.tmp"))


def test_an_uncreatable_cache_folder_still_answers(server: FakeLLMServer) -> None:
    """A cache under /dev/null cannot exist: the answer still comes, and the failure is counted."""
    provider = CachingProvider(provider_for(f"{server.url}/agent"), ResponseCache(Path(os.devnull) / "x"))
    provider.invoke(ProviderRequest(question="q"))
    [request] = server.requests
    assert isinstance(request, RecordedRequest) and request.path == AGENT
    assert provider.cache.stats.write_errors == 1 and provider.cache.stats.stored == 0


def test_an_answer_stored_by_another_agentv_gate_version_is_not_replayed(tmp_path: Path, server: FakeLLMServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache holds the answer as agentv-gate *read* the reply (text, tool calls, what counts as a
    withheld reply), not the raw reply: after an upgrade that reads replies differently, an old entry
    would replay the old reading (a filtered reply stored as an empty success, thought parts in the
    answer), so a release never replays another release's entries."""
    cache = ResponseCache(tmp_path / "c")
    request = ProviderRequest(question="Capital of France?")
    provider = provider_for(f"{server.url}/agent")
    CachingProvider(provider, cache).invoke(request)
    monkeypatch.setattr(cache_module, "_reader_version", lambda: "0.0.1-older")
    CachingProvider(provider, cache).invoke(request)
    assert len(server.requests) == 2 and cache.stats.hits == 0
