"""A secret echoed back in a *successful* reply never reaches any output, in any common encoding.

The target and its judge answer 200 with every credential they were sent (key, `headers:`
values, their base64 and URL-encoded forms) in the answer and in the judge's reasoning; a cli
target prints a token from its `env:` and a code judge repeats the answer; a password in an
endpoint URL shows up in an error. Nothing of it may appear in stdout, stderr, results, JUnit,
annotations, the job summary, step outputs or the cache.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
import uuid
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows


def forms(secret: str) -> dict[str, str]:
    """The secret and the encodings a server or a script commonly turns it into."""
    return {
        "plain": secret,
        "base64": base64.b64encode(secret.encode()).decode(),
        "urlsafe base64": base64.urlsafe_b64encode(secret.encode()).decode(),
        "basic auth": base64.b64encode(f"user:{secret}".encode()).decode(),
        "percent-encoded": urllib.parse.quote(secret, safe=""),
    }


def echo_everything(request: RecordedRequest) -> FakeReply:
    """200 with every credential the request carried, plain and encoded, in the answer."""
    sent = [request.headers.get(name, "") for name in ("authorization", "x-api-key", "x-team-token")]
    values = [v.removeprefix("Bearer ").removeprefix("team ") for v in sent if v]
    echoed = " | ".join(f"{name}={form}" for value in values for name, form in forms(value).items())
    reply = {"score": 1.0, "hits": ["Paris"], "reasoning": f"Paris; you sent {echoed}"}
    return FakeReply.openai(f"Paris. {json.dumps(reply)}")


def every_output(tmp_path: Path, repo: Path, proc_out: str, proc_err: str) -> dict[str, str]:
    texts = {"stdout": proc_out, "stderr": proc_err}
    for path in [tmp_path / "summary.md", tmp_path / "output.txt", *repo.rglob("*")]:
        if path.is_file() and ".agentv" not in path.parts and "evals" not in path.parts:
            texts[str(path)] = path.read_bytes().decode("utf-8", "replace")
    return texts


def test_keys_echoed_in_successful_replies_are_redacted_everywhere(tmp_path: Path) -> None:
    key, header_token, team_token, url_password, env_token = (
        f"{name}-{uuid.uuid4().hex}" for name in ("sk", "bearer", "team", "pw", "envtok"))
    with FakeLLMServer() as server:
        server.set_default("/v1/chat/completions", echo_everything)
        server.set_default("/denied/v1/chat/completions", FakeReply.error(401, "no"))
        host = server.url.removeprefix("http://")
        repo = make_repo(tmp_path / "repo", f"""
            targets:
              - name: model
                provider: openai
                endpoint: {server.url}/v1
                api_key: ${{{{ ECHO_KEY }}}}
                model: fake
                max_retries: 0
                headers:
                  x-api-key: ${{{{ ECHO_BEARER }}}}
                  x-team-token: team ${{{{ ECHO_TEAM }}}}
              - name: basic
                provider: openai
                endpoint: http://user:{url_password}@{host}/denied/v1
                api_key: ${{{{ ECHO_KEY }}}}
                model: fake
                max_retries: 0
              - name: agent
                provider: cli
                command_template: printf 'Paris %s' "$AGENT_TOKEN"
                env:
                  AGENT_TOKEN: ${{{{ ECHO_ENV_TOKEN }}}}
            """)
        write(repo / "evals" / "judge.py", """
            import json, sys
            payload = json.load(sys.stdin)
            print(json.dumps({"score": 1.0, "reasoning": "the agent said " + payload["answer"]}))
            """)
        write(repo / "evals" / "echo.eval.yaml", """
            tests:
              - id: answer-and-judge-echo
                target: model
                input: capital of France?
                criteria: Paris
                assert:
                  - {type: contains, value: Paris}
                  - {type: llm_judge, name: quality, target: model}
              - id: url-password
                target: basic
                input: capital of France?
                assert: [{type: contains, value: Paris}]
              - id: cli-env
                target: agent
                input: capital of France?
                assert:
                  - {type: contains, value: Paris}
                  - {type: code_judge, name: repeats, script: [python3, judge.py]}
            """)
        env = {"ECHO_KEY": key, "ECHO_BEARER": header_token, "ECHO_TEAM": team_token,
               "ECHO_ENV_TOKEN": env_token, "GITHUB_ACTIONS": "true",
               "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
        proc = run_cli("run", "evals", env=env, cwd=repo)
        sent = server.requests

    assert any(r.headers.get("x-team-token") == f"team {team_token}" for r in sent), "the header was not sent"
    rows = {r["eval_id"]: r for r in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["answer-and-judge-echo"]["verdict"] == "pass", rows
    assert rows["cli-env"]["verdict"] == "pass", rows
    assert rows["url-password"]["verdict"] == "error", rows
    assert "***" in rows["answer-and-judge-echo"]["candidate_answer"]
    assert "***" in rows["cli-env"]["candidate_answer"]
    assert "HTTP 401" in rows["url-password"]["error"] and "user:***@" in rows["url-password"]["error"]
    outputs = every_output(tmp_path, repo, proc.stdout, proc.stderr)
    assert any("cache" in name for name in outputs), "the answer should have been cached"
    leaks = [f"{form_name} of {secret[:6]} in {where}"
             for secret in (key, header_token, team_token, url_password, env_token)
             for form_name, form in forms(secret).items()
             for where, text in outputs.items() if form in text]
    assert leaks == []


def test_a_key_split_by_terminal_escapes_is_hidden_where_reports_strip_them(tmp_path: Path) -> None:
    """Reports remove ANSI escapes (text.clean), which joins the pieces of a key an agent printed in
    colour (a highlighter colours `sk`, `-` and the rest apart): the joined key must not show."""
    token = f"tok-{uuid.uuid4().hex}"
    repo = make_repo(tmp_path / "repo", """
        targets:
          - name: agent
            provider: cli
            command: python3 agent.py
            env:
              AGENT_TOKEN: ${{ SPLIT_TOKEN }}
        """)
    write(repo / "evals" / "agent.py", r"""
        import os
        t = os.environ["AGENT_TOKEN"]
        print(f"Paris {t[:5]}\x1b[0m{t[5:]} | {t[:9]}\x1b]8;;http://x\x07{t[9:]} | {t[:12]}\x9b1m{t[12:]}")
        """)
    write(repo / "evals" / "judge.py", """
        import json, sys
        answer = json.load(sys.stdin)["answer"]
        print(json.dumps({"score": 0.0, "misses": ["said " + answer], "reasoning": "it said " + answer}))
        """)
    write(repo / "evals" / "split.eval.yaml", """
        tests:
          - id: split-key
            input: capital of France?
            assert:
              - {type: code_judge, name: echo, script: [python3, judge.py]}
        """)
    env = {"SPLIT_TOKEN": token, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
    proc = run_cli("run", "evals", "--verbose", env=env, cwd=repo)

    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert rows[0]["verdict"] == "fail", rows
    assert "Paris" in rows[0]["candidate_answer"]
    outputs = every_output(tmp_path, repo, proc.stdout, proc.stderr)
    assert {"stdout", "stderr", str(tmp_path / "summary.md")} <= set(outputs)
    leaks = [where for where, text in outputs.items() if token in text]
    assert leaks == []


def test_secret_named_variables_are_hidden_wherever_targets_yaml_reads_them(tmp_path: Path) -> None:
    """A key in `command` (`--api-key ${{ OPENAI_API_KEY }}`), in a healthcheck URL's query, in an
    `env:` entry of a harmless name, or in a target this run never uses: a variable named like a
    secret is a secret wherever targets.yaml reads it, as it is in eval files."""
    api_key, health_token, env_token, unused_key = (f"{name}-{uuid.uuid4().hex}"
                                                    for name in ("sk", "health", "envtok", "unused"))
    repo = make_repo(tmp_path / "repo", """
        targets:
          - name: flags
            provider: cli
            command: python3 agent.py --api-key ${{ PROBE_OPENAI_API_KEY }}
          - name: checked
            provider: cli
            command: python3 agent.py
            healthcheck:
              url: http://127.0.0.1:9/health?token=${{ PROBE_HEALTH_TOKEN }}
              timeout_seconds: 2
          - name: harmless-name
            provider: cli
            command: python3 agent.py
            env:
              AUTH: ${{ PROBE_AUTH_TOKEN }}
          - name: never-used
            provider: openai
            endpoint: http://127.0.0.1:9/v1
            api_key: ${{ PROBE_UNUSED_KEY }}
            model: fake
        """)
    write(repo / "evals" / "agent.py", """
        import os, sys
        sys.stderr.write(f"argv {sys.argv} auth {os.environ.get('AUTH')} other {os.environ['PROBE_UNUSED_KEY']}")
        sys.exit(3)
        """)
    write(repo / "evals" / "named.eval.yaml", """
        tests:
          - id: key-in-command
            target: flags
            input: capital of France?
            assert: [{type: contains, value: Paris}]
          - id: key-in-healthcheck
            target: checked
            input: capital of France?
            assert: [{type: contains, value: Paris}]
          - id: key-in-env
            target: harmless-name
            input: capital of France?
            assert: [{type: contains, value: Paris}]
        """)
    env = {"PROBE_OPENAI_API_KEY": api_key, "PROBE_HEALTH_TOKEN": health_token, "PROBE_AUTH_TOKEN": env_token,
           "PROBE_UNUSED_KEY": unused_key, "GITHUB_ACTIONS": "true",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
    proc = run_cli("run", "evals", "--verbose", env=env, cwd=repo)

    rows = {r["eval_id"]: r for r in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert {r["verdict"] for r in rows.values()} == {"error"}, rows
    assert "'--api-key', '***'" in rows["key-in-command"]["error"], rows["key-in-command"]["error"]
    assert "token=***" in rows["key-in-healthcheck"]["error"], rows["key-in-healthcheck"]["error"]
    assert "auth *** other ***" in rows["key-in-env"]["error"], rows["key-in-env"]["error"]
    outputs = every_output(tmp_path, repo, proc.stdout, proc.stderr)
    leaks = [f"{secret[:6]} in {where}" for secret in (api_key, health_token, env_token, unused_key)
             for where, text in outputs.items() if secret in text]
    assert leaks == []


def test_a_key_at_the_edge_of_a_cut_output_leaves_no_piece(tmp_path: Path) -> None:
    """Long outputs are cut to their last (or first) characters before they are quoted: a failing
    agent's stderr, a crashing code judge's or prompt script's stderr, a hook's output, an invalid
    judge reply. A key the cut falls inside of must be hidden before the cut: after it, what is left
    of the key is no longer the key and was shown as it is."""
    key = f"sk-{uuid.uuid4().hex}"
    tail_cut = f"python3 -c \"import sys; sys.stderr.write('{key}' + 'x' * (NEED - 16)); sys.exit(3)\""
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: agent
            provider: cli
            command: {tail_cut.replace("NEED", "2000")}
            judge_target: judge
          - name: judge
            provider: mock
            response: Paris
            judge_response: "{'y' * 186}{key}"
          - name: holds-the-key
            provider: openai
            endpoint: http://127.0.0.1:9/v1
            api_key: ${{{{ CUT_API_KEY }}}}
            model: fake
        """)
    crash = f"import sys; sys.stderr.write({key!r} + 'x' * (2000 - 16)); sys.exit(3)"
    write(repo / "evals" / "crash.py", crash)
    write(repo / "evals" / "hook.py", f"import sys; print({key!r} + 'x' * (4000 - 16)); sys.exit(3)")
    write(repo / "evals" / "cut.eval.yaml", """
        tests:
          - id: agent-stderr
            target: agent
            input: capital of France?
            assert: [{type: contains, value: Paris}]
          - id: judge-stderr
            target: judge
            input: capital of France?
            assert: [{type: code_judge, name: crash, script: [python3, crash.py]}]
          - id: prompt-script-stderr
            target: judge
            input: capital of France?
            assert: [{type: llm_judge, name: scripted, target: judge, prompt: {command: [python3, crash.py]}}]
          - id: judge-reply
            target: judge
            input: capital of France?
            assert: [{type: llm_judge, name: quality, target: judge}]
          - id: hook-output
            target: judge
            input: capital of France?
            workspace:
              hooks:
                before_each: [python3, hook.py]
            assert: [{type: contains, value: Paris}]
        """)
    env = {"CUT_API_KEY": key, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
    proc = run_cli("run", "evals", "--verbose", env=env, cwd=repo)

    rows = {r["eval_id"]: r for r in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert set(rows) == {"agent-stderr", "judge-stderr", "prompt-script-stderr", "judge-reply", "hook-output"}
    assert {r["verdict"] for r in rows.values()} == {"error"}, rows
    outputs = every_output(tmp_path, repo, proc.stdout, proc.stderr)
    pieces = {"head": key[:12], "tail": key[-12:]}
    leaks = [f"{name} in {where}" for name, piece in pieces.items() for where, text in outputs.items() if piece in text]
    assert leaks == []


def test_a_secret_quoted_by_a_targets_yaml_problem_is_hidden(tmp_path: Path) -> None:
    """A target refused for a value read from a secret-named variable quotes the value: the variable's
    secret is registered before the target is checked, so the problem shows `***` (run and validate)."""
    token = f"tok-{uuid.uuid4().hex}"
    repo = make_repo(tmp_path / "repo", """
        targets:
          - name: default
            provider: cli
            command: echo ok
            workers: ${{ PROBLEM_TOKEN }}
        """)
    write(repo / "evals" / "a.eval.yaml", """
        tests:
          - {id: c, input: q, assert: [{type: contains, value: ok}]}
        """)
    env = {"PROBLEM_TOKEN": token, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    for command, status in (("run", 2), ("validate", 1)):
        proc = run_cli(command, "evals", env=env, cwd=repo)
        assert proc.returncode == status, proc.stdout + proc.stderr
        assert "workers must be a whole number >= 1, got '***'" in proc.stdout + proc.stderr
        assert token not in proc.stdout + proc.stderr + (tmp_path / "summary.md").read_text()


def test_a_cached_answer_holds_no_key_split_by_terminal_escapes(tmp_path: Path) -> None:
    """The response cache is JSON, where an escape character is written `\\u001b`: the key around it
    must be hidden before the entry is serialised, or the cache file keeps it readable in two pieces."""
    key = f"sk-{uuid.uuid4().hex}"
    with FakeLLMServer() as server:
        server.set_default("/v1/chat/completions", FakeReply.openai(f"Paris {key[:8]}\x1b[0m{key[8:]}"))
        repo = make_repo(tmp_path / "repo", f"""
            targets:
              - name: model
                provider: openai
                endpoint: {server.url}/v1
                api_key: ${{{{ CACHED_SPLIT_KEY }}}}
                model: fake
            """)
        write(repo / "evals" / "a.eval.yaml", """
            tests:
              - {id: c, input: q, assert: [{type: contains, value: Paris}]}
            """)
        proc = run_cli("run", "evals", env={"CACHED_SPLIT_KEY": key}, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = list((repo / ".agentv-gate-cache").rglob("*.json"))
    assert entries, "the answer should have been cached"
    for entry in entries:
        text = entry.read_text()
        assert "Paris ***" in text and key[8:] not in text, text


def test_a_key_in_the_steps_environment_that_no_file_names_is_hidden_too(tmp_path: Path) -> None:
    """An agent and its judges inherit the step's environment: `GITHUB_TOKEN` or an `OPENAI_API_KEY`
    that targets.yaml never names can still be printed by the agent, and reached results.jsonl, the
    JUnit file and the console. A short value of a variable so named (`USE_TOKEN=true`) is a setting,
    not a credential: "true" stays in the answer."""
    github_token, api_key = f"ghs_{uuid.uuid4().hex}", f"sk-env-{uuid.uuid4().hex}"
    repo = make_repo(tmp_path / "repo", """
        targets:
          - name: agent
            provider: cli
            command: printf 'Paris %s %s %s' "$GITHUB_TOKEN" "$OPENAI_API_KEY" "$USE_TOKEN"
        """)
    write(repo / "evals" / "env.eval.yaml", """
        tests:
          - id: env-echo
            target: agent
            input: capital of France?
            assert: [{type: contains, value: Paris}]
        """)
    env = {"GITHUB_TOKEN": github_token, "OPENAI_API_KEY": api_key, "USE_TOKEN": "true",
           "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
    proc = run_cli("run", "evals", env=env, cwd=repo)
    row = read_rows(repo / ".agentv-gate/results.jsonl")[0]
    assert row["verdict"] == "pass" and row["candidate_answer"] == "Paris *** *** true", proc.stdout + proc.stderr
    outputs = every_output(tmp_path, repo, proc.stdout, proc.stderr)
    assert [where for where, text in outputs.items() if github_token in text or api_key in text] == []
