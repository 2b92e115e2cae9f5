"""`run --record DIR` and `run --replay DIR` through the CLI, against a loopback model server that is then stopped.

A replay answers from the folder alone: no network, no key. A request the folder does not hold makes
its case error, naming the first field that differs from the nearest recorded request, and is never
sent on. Code judges and deterministic assertions run afresh on the recorded answers.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.helpers.agents import scripted_agent
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write
from tests.helpers.git import commit_all, git

AGENT_KEY = "sk-agent-0123456789abcdef0123"
JUDGE_KEY = "sk-judge-fedcba9876543210fedc"
KEYS = {"AGENT_KEY": AGENT_KEY, "JUDGE_KEY": JUDGE_KEY}
VERDICT = json.dumps({"score": 1.0, "hits": ["says Paris"], "misses": [], "reasoning": "fine"})
JUDGE_SCRIPT = """\
import json, sys
data = json.load(sys.stdin)
answer = data.get("answer") or data.get("candidate_answer") or ""
print(json.dumps({"score": 1.0 if "Paris" in answer else 0.0, "hits": [], "misses": []}))
"""
TIMINGS = ("duration_ms", "timestamp", "run_id", "replayed")


def project(root: Path, server_url: str, cases: int = 3) -> Path:
    repo = make_repo(root, f"""\
targets:
  - name: default
    provider: openai
    base_url: {server_url}/agent
    api_key: ${{{{ AGENT_KEY }}}}
    model: fake-agent
    temperature: 0.2
    judge_target: grader
  - name: grader
    provider: openai
    base_url: {server_url}/judge
    api_key: ${{{{ JUDGE_KEY }}}}
    model: fake-judge
""")
    write(repo / "evals" / "judges" / "paris.py", JUDGE_SCRIPT)  # in the eval folder: not the agent's
    write(repo / "evals" / "capital.yaml", "tests:\n" + "".join(
        f"  - id: case-{i}\n    input: Capital of France? ({i})\n    criteria: Says Paris\n"
        "    assert:\n      - {name: quality, type: llm_judge}\n      - {type: contains, value: Paris}\n"
        "      - {name: script, type: code_judge, script: [python3, judges/paris.py]}\n"
        for i in range(cases)))
    return repo


def serve(server: FakeLLMServer) -> None:
    server.set_default("/agent/v1/chat/completions", FakeReply.openai("Paris"))
    server.set_default("/judge/v1/chat/completions", FakeReply.openai(VERDICT))


def rows(repo: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(line) for line in (repo / ".agentv-gate" / "results.jsonl").read_text().splitlines()]
    return {row["eval_id"]: row for row in found}


def timeless(value: Any) -> Any:
    """A row without its timings (at any depth) and the run's own stamps."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def record(tmp_path: Path, judges: bool = True, cases: int = 3,
           trials: int = 1) -> tuple[Path, Path, dict[str, dict[str, Any]]]:
    with FakeLLMServer() as server:
        serve(server)
        repo = project(tmp_path / "repo", server.url, cases)
        commit_all(repo)
        flags = ["--record", "recording", *(["--record-judges"] if judges else [])]
        if trials > 1:
            flags += ["--trials", str(trials), "--threshold", "0.9"]
        proc = run_cli("run", "evals", *flags, cwd=repo, env=KEYS)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(server.requests_for("/agent/v1/chat/completions")) == cases * trials
    return repo, repo / "recording", rows(repo)


def replay(repo: Path, *extra: str) -> Any:
    return run_cli("run", "evals", "--replay", "recording", *extra, cwd=repo, drop=("AGENT_KEY", "JUDGE_KEY"))


def test_a_recorded_suite_replays_with_the_server_stopped_giving_the_same_rows(tmp_path: Path) -> None:
    repo, folder, recorded = record(tmp_path)
    names = sorted(p.name for p in folder.iterdir())
    assert "manifest.json" in names
    entries = [n for n in names if n != "manifest.json"]
    assert len(entries) == 6 and all(re.fullmatch(r"[0-9a-f]{32}\.json", n) for n in entries)  # 3 answers, 3 verdicts
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["major"] == manifest["agentv_gate"].split(".")[0] and manifest["judges"] is True
    for entry in folder.iterdir():
        text = entry.read_text()
        assert AGENT_KEY not in text and JUDGE_KEY not in text and "authorization" not in text.lower()
        assert len(text) < 4000
    first = json.loads((folder / entries[0]).read_text())
    assert first["request"]["role"] in ("target", "judge") and "body" in first["request"]

    sha = git(repo, "rev-parse", "HEAD")
    assert manifest["commit"] == sha and manifest["ref"] == "main"
    proc = replay(repo)  # the server is gone and no key is set
    assert proc.returncode == 0, proc.stdout + proc.stderr
    replayed = rows(repo)
    assert timeless(replayed) == timeless(recorded)
    assert {row["replayed"] for row in replayed.values()} == {f"main@{sha[:7]}"}


def test_changing_one_case_input_makes_exactly_that_case_error_naming_the_field(tmp_path: Path) -> None:
    repo, _folder, _recorded = record(tmp_path)
    suite = repo / "evals" / "capital.yaml"
    suite.write_text(suite.read_text().replace("Capital of France? (1)", "Capital of Spain? (1)"))
    proc = replay(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    replayed = rows(repo)
    assert [k for k, r in replayed.items() if r["verdict"] != "pass"] == ["case-1"]
    error = replayed["case-1"]["error"]
    assert "not in the recording" in error and "differs first at `body.messages[0].content`" in error, error
    assert 'now "Capital of Spain? (1)"' in error and 'recorded "Capital of France? (' in error
    assert replayed["case-1"]["failure_reason_code"] == "not_recorded"


def test_a_changed_sampling_setting_is_named_too(tmp_path: Path) -> None:
    repo, _folder, _recorded = record(tmp_path, cases=1)
    # targets.yaml is the agent's by default (a changed model is another agent); here only src/ is
    write(repo / ".agentv" / "gate.yaml", "agent_paths: [src/**]\n")
    targets = repo / ".agentv" / "targets.yaml"
    targets.write_text(targets.read_text().replace("temperature: 0.2", "temperature: 0.7"))
    proc = replay(repo)
    assert proc.returncode == 1
    assert "differs first at `body.temperature`: recorded 0.2, now 0.7" in rows(repo)["case-0"]["error"]


def test_code_judges_and_assertions_run_fresh_on_the_recorded_answers(tmp_path: Path) -> None:
    repo, _folder, _recorded = record(tmp_path, cases=2)
    suite = repo / "evals" / "capital.yaml"
    # case-0's deterministic assertion now asks for another word; the judge script now wants "Rome" for all
    text = suite.read_text().replace("value: Paris}", "value: Lyon}", 1)
    suite.write_text(text)
    write(repo / "evals" / "judges" / "paris.py", JUDGE_SCRIPT.replace('"Paris" in answer', '"Rome" in answer'))
    proc = replay(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    scores = {k: {s["name"]: s["score"] for s in r["scores"]} for k, r in rows(repo).items()}
    assert scores["case-0"] == {"quality": 1.0, "contains-Lyon": 0.0, "script": 0.0}, scores
    assert scores["case-1"] == {"quality": 1.0, "contains-Paris": 1.0, "script": 0.0}, scores


def test_without_recorded_judges_a_replay_judges_live_and_says_when_the_key_is_missing(tmp_path: Path) -> None:
    repo, folder, _recorded = record(tmp_path, judges=False, cases=1)
    assert len([p for p in folder.iterdir() if p.name != "manifest.json"]) == 1  # the agent's answer only
    proc = replay(repo)
    assert proc.returncode == 1
    error = rows(repo)["case-0"]["error"]
    assert "judge target 'grader' reads JUDGE_KEY, unset" in error and "--record-judges" in error


def test_replay_refuses_a_folder_of_another_major_release(tmp_path: Path) -> None:
    repo, folder, _recorded = record(tmp_path, cases=1)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "agentv_gate": "99.0.0"}))
    proc = replay(repo)
    assert proc.returncode == 2
    assert "recorded by agentv-gate 99.0.0" in proc.stderr and "record again" in proc.stderr


def test_replay_reads_nothing_outside_the_folder(tmp_path: Path) -> None:
    repo, folder, _recorded = record(tmp_path, cases=1)
    entry = next(p for p in folder.iterdir() if p.name != "manifest.json")
    outside = tmp_path / "outside.json"
    outside.write_text(entry.read_text())
    entry.unlink()
    os.symlink(outside, entry)
    proc = replay(repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"cannot read {entry.name}" in proc.stderr
    # A name that is not a request's hash is not read at all (no `../` tricks through names).
    entry.unlink()
    entry.write_text(outside.read_text())
    write(folder / "..json", "not json")
    proc = replay(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_hand_edited_request_is_refused_whole(tmp_path: Path) -> None:
    repo, folder, _recorded = record(tmp_path, cases=1)
    entry = next(p for p in folder.iterdir() if p.name != "manifest.json")
    data = json.loads(entry.read_text())
    data["request"]["target"] = "someone-else"
    entry.write_text(json.dumps(data))
    proc = replay(repo)
    assert proc.returncode == 2
    assert f"{entry.name} is not the recording of the request it holds" in proc.stderr


def test_record_judges_needs_record_and_record_excludes_replay(repo: Path) -> None:
    write(repo / "evals" / "a.yaml", "tests:\n  - id: a\n    input: hi\n    assert:\n      - {type: contains, value: ok}\n")
    proc = run_cli("run", "evals", "--record-judges", cwd=repo)
    assert proc.returncode == 2 and "--record-judges without --record" in proc.stderr
    proc = run_cli("run", "evals", "--record", "r", "--replay", "r", cwd=repo)
    assert proc.returncode == 2


def cli_project(tmp_path: Path) -> Path:
    repo = scripted_agent(make_repo(tmp_path / "repo"), {"France": "Paris", "Italy": "Rome"})
    write(repo / "evals" / "a.yaml", "tests:\n" + "".join(
        f"  - id: {c}\n    input: Capital of {c}?\n    assert:\n      - {{type: contains, value: {a}}}\n"
        for c, a in (("France", "Paris"), ("Italy", "Rome"))))
    write(repo / ".agentv" / "gate.yaml", "agent_paths: [agent.py]\n")
    commit_all(repo)
    proc = run_cli("run", "evals", "--record", "recording", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo


def test_a_cli_agent_is_recorded_and_never_started_by_a_replay(tmp_path: Path) -> None:
    repo = cli_project(tmp_path)
    entry = json.loads(next(p for p in (repo / "recording").iterdir() if p.name != "manifest.json").read_text())
    assert entry["request"]["kind"] == "cli" and "command_template" in entry["request"]["command"]
    assert str(repo) not in json.dumps(entry["request"])  # paths under the repository are written <root>
    write(repo / "replies.json", "{}")  # the agent, if it were started, would now crash
    proc = run_cli("run", "evals", "--replay", "recording", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {k: r["candidate_answer"] for k, r in rows(repo).items()} == {"France": "Paris", "Italy": "Rome"}
    assert "agent code changed? no; cases needing new answers: 0 (not run)" in proc.stdout


def test_a_replay_after_the_agent_changed_judges_no_case_from_old_answers(tmp_path: Path) -> None:
    repo = cli_project(tmp_path)
    write(repo / "agent.py", "raise SystemExit('the agent must not run')\n")
    proc = run_cli("run", "evals", "--replay", "recording", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert all(r["failure_reason_code"] == "not_recorded" and "agent code changed since the recording" in r["error"]
               and "agent.py" in r["error"] for r in rows(repo).values())
    sha = git(repo, "rev-parse", "HEAD")[:7]
    assert (f"replayed: agent answers from main@{sha}; agent code changed? yes; cases needing new answers: 2 "
            "(not run)") in proc.stdout


def test_a_new_case_without_an_answer_fails_the_gate_even_under_fail_on_regression(tmp_path: Path) -> None:
    repo, _folder, recorded = record(tmp_path, cases=2)
    base = tmp_path / "base.jsonl"
    base.write_text((repo / ".agentv-gate" / "results.jsonl").read_text())
    suite = repo / "evals" / "capital.yaml"
    suite.write_text(suite.read_text() + "  - id: brand-new\n    input: Capital of Peru?\n    criteria: Lima\n"
                     "    assert:\n      - {type: contains, value: Lima}\n")
    proc = replay(repo, "--baseline", str(base), "--fail-on", "regression")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 case(s) need new answers (not in the replayed recording): they were not judged" in proc.stdout
    assert "cases needing new answers: 1 (not run)" in proc.stdout
    assert rows(repo)["brand-new"]["failure_reason_code"] == "not_recorded"


FAILS_CASE_0_TWICE = """\
import json, pathlib, sys
data = json.dumps(json.load(sys.stdin))
seen = pathlib.Path(__file__).with_name("case-0.seen")
calls = 0
if "(0)" in data:  # only case 0's judge reads its count: case 1's, run beside it, could read it half written
    calls = int(seen.read_text()) if seen.exists() else 0
    seen.write_text(str(calls + 1))
print(json.dumps({"score": 0.0 if "(0)" in data and calls < 2 else 1.0, "hits": [], "misses": []}))
"""


def test_a_replay_runs_no_guard_re_run_whose_verdicts_the_recording_lacks(tmp_path: Path) -> None:
    # a recording holds the judges' verdicts of the trials it ran: a re-run's trial 4 had none, erred, and
    # the guard read the errors as failures, failing a case on verdicts that were never given
    repo, _folder, _recorded = record(tmp_path, cases=2, trials=3)  # at 0.9 a failed code judge fails its trial
    base = tmp_path / "base.jsonl"
    base.write_text((repo / ".agentv-gate" / "results.jsonl").read_text())
    write(repo / "evals" / "judges" / "paris.py", FAILS_CASE_0_TWICE)  # the pull request's change: a code judge
    proc = replay(repo, "--trials", "3", "--threshold", "0.9", "--baseline", str(base), "--fail-on", "regression")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "per-case guard: no re-runs in a replay" in proc.stderr and "1 case(s) stay undecided: case-0" in proc.stderr
    row = rows(repo)["case-0"]
    assert [t["verdict"] for t in row["trials"]] == ["fail", "fail", "pass"] and "reruns" not in row
    assert "1 suspicious case(s)" in proc.stdout, proc.stdout
    # --quiet leaves the note out, not the rule: the same replay again (its judge's failures again too)
    (repo / "evals" / "judges" / "case-0.seen").unlink()
    quiet = replay(repo, "--trials", "3", "--threshold", "0.9", "--baseline", str(base), "--fail-on", "regression",
                   "--quiet")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "per-case guard" not in quiet.stderr and "reruns" not in rows(repo)["case-0"], quiet.stdout + quiet.stderr


def test_a_secret_the_model_echoes_is_never_written_and_trials_are_recorded_apart(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default("/agent/v1/chat/completions", FakeReply.openai(f"Paris (my key is {AGENT_KEY})"))
        server.set_default("/judge/v1/chat/completions", FakeReply.openai(VERDICT))
        repo = project(tmp_path / "repo", server.url, cases=1)
        commit_all(repo)
        proc = run_cli("run", "evals", "--record", "recording", "--record-judges", "--trials", "2", cwd=repo,
                       env=KEYS)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = [p for p in (repo / "recording").iterdir() if p.name != "manifest.json"]
    assert len(entries) == 4  # each trial's answer and verdict: the attempt is part of the request
    assert all(AGENT_KEY not in p.read_text() for p in entries)
    assert any("my key is ***" in p.read_text() for p in entries)
    recorded = rows(repo)
    proc = replay(repo, "--trials", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [t["score"] for t in rows(repo)["case-0"]["trials"]] == [t["score"] for t in recorded["case-0"]["trials"]]
