#!/usr/bin/env python3
"""How fast is agentv-gate, measured against the floor it cannot go below.

Two suites of N generated cases each, run by the real CLI in a subprocess:

* code: every case scored by a stdlib Python code judge (one process spawn per case);
* llm: every case scored by an `llm_judge` whose judge target is an OpenAI-compatible server on
  127.0.0.1 answering each call after a fixed latency (200 ms by default);
* trajectory (only with `--kinds trajectory`): `contains` + `tool_trajectory` on the tool calls of an
  OpenAI-compatible agent on 127.0.0.1, against the same suite with `contains` alone.
* mock (only with `--kinds mock`): a `mock` target and a `contains` assertion, nothing to wait for:
  the tool's own cost (start-up, loading, scoring, reports), against `import agentv_gate.commands.run`
  alone, the floor of any run;
* ratelimited: the llm suite against a judge that also enforces a rate limit (`--rpm`, `--tpm`)
  and answers 429 with the headers real providers send, run three ways: agentv-gate as it was
  before per-target rate limiting (`--baseline`), learning the limit from the headers, and with
  `max_rpm` set. Reported: wall time against N / rpm, errored cases, share of requests answered 429.

For each, the bare cost is measured without agentv-gate, so the overhead we add is visible:

* code: the same judge spawned N times with the byte-identical payload and the same concurrency
  (Popen, write, read, wait from a thread pool of `workers` threads: the least any runner does),
  plus one spawn timed alone, giving the ideal `N x spawn / cores`;
* llm: `N x latency / workers`, the best any client with that many workers can do.

Printed per run: wall time, cases/s, peak RSS of the agentv-gate process (wait4's ru_maxrss),
and overhead per case over the bare cost. The llm suite is run twice, cold and then warm from
the response cache (which must then send no request). Each figure is the fastest of `--repeat`
runs (gate and bare alternating), since on a shared machine noise only ever adds time.
`--markdown` prints the table for bench/README.md.

    .venv/bin/python bench/run_bench.py                      # N = 200, 1000, 5000
    .venv/bin/python bench/run_bench.py --sizes 200 --kinds code
    .venv/bin/python bench/run_bench.py --sizes 1000 --kinds ratelimited   # a judge limited to 600 rpm
    .venv/bin/python bench/run_bench.py --sizes 200 --kinds mock --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the loopback model server the tests use

from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RateLimited  # noqa: E402

GATE = str(Path(sys.executable).parent / "agentv-gate")
VERDICT = '{"score": 1.0, "hits": ["names Paris"], "misses": [], "reasoning": "Correct."}'
JUDGE_PATH = "/judge/v1/chat/completions"

JUDGE_SCRIPT = '''\
import json, os, sys
raw = sys.stdin.read()
dump = os.environ.get("BENCH_PAYLOAD_OUT")
if dump:
    open(dump, "w").write(raw)
payload = json.loads(raw)
answer = payload.get("answer") or payload.get("candidate_answer") or ""
words = (payload.get("config") or {}).get("keywords") or []
hits = [w for w in words if w in answer]
print(json.dumps({"score": len(hits) / len(words) if words else 1.0, "hits": hits,
                  "misses": [w for w in words if w not in answer], "reasoning": "keywords"}))
'''


@dataclass
class Measure:
    kind: str
    cases: int
    workers: int
    wall_s: float
    cases_per_s: float
    peak_rss_mb: float
    bare_s: float
    ideal_s: float
    overhead_ms_per_case: float
    notes: dict[str, float | int | str] = field(default_factory=dict)


# ---------------------------------------------------------------- suites


def write_project(folder: Path, n: int, kind: str, server_url: str | None,
                  judge_keys: tuple[str, ...] = ("    max_retries: 0",)) -> None:
    (folder / ".git").mkdir(parents=True)
    (folder / ".agentv").mkdir()
    (folder / "evals").mkdir()
    (folder / "judge.py").write_text(JUDGE_SCRIPT)
    if kind in ("cli", "cli-contains"):  # a command-line agent, started by the gate under /bin/sh -c for every case
        # command_template: the name every version reads (--gate-ref runs older ones too)
        targets = ["targets:", "  - name: default", "    provider: cli", f"    command_template: {CLI_COMMAND!r}"]
    elif kind in AGENT_KINDS:  # an OpenAI-compatible agent on the loopback server that calls tools
        targets = ["targets:", "  - name: default", "    provider: openai", f"    base_url: {server_url}/agent",
                   "    model: bench-agent", "    max_retries: 0", "    timeout_seconds: 30"]
    else:
        targets = ["targets:", "  - name: default", "    provider: mock",
                   '    response: "Paris is the capital of France, on the Seine."']
    if kind in ("llm", *JUDGED_KINDS):
        judge_base = f"{server_url}/rubric-judge" if kind == "rubrics" else f"{server_url}/judge"
        targets += ["    judge_target: grader", "  - name: grader", "    provider: openai",
                    f"    base_url: {judge_base}", "    model: bench-judge", "    timeout_seconds: 30", *judge_keys]
    (folder / ".agentv" / "targets.yaml").write_text("\n".join(targets) + "\n")
    if kind in ("mock", "cli-contains"):
        evaluator = "    assert:\n      - {name: names, type: contains, value: Paris}\n"
    elif kind in ("code", "trials", "cli"):
        # `python3 judge.py`, as suites are written: the first python3 on the PATH the gate is given
        # (a pyenv shim or a real interpreter, see bench_cli), the one the bare spawns use too.
        evaluator = ("    assert:\n      - name: keywords\n        type: code_judge\n"
                     "        script: [python3, judge.py]\n        keywords: [Paris, Seine]\n")
    elif kind in AGENT_KINDS:
        evaluator = "    assert:\n      - {name: names, type: contains, value: Paris}\n"
        if kind in ("trajectory", "rubrics"):
            evaluator += ("      - name: pipeline\n        type: tool-trajectory\n        mode: in_order\n"
                          "        args_match: superset\n        expected:\n          - {tool: search, args: {q: capital}}\n"
                          "          - {tool: fetch}\n")
        if kind == "rubrics":
            evaluator += ("      - name: checklist\n        type: rubrics\n        criteria:\n"
                          "          - {id: capital, outcome: Names Paris}\n          - {id: river, outcome: Names the Seine}\n")
        if kind == "judged":
            evaluator += "      - name: quality\n        type: llm_judge\n"
    else:
        evaluator = "    assert:\n      - name: quality\n        type: llm_judge\n"
    with open(folder / "evals" / "bench.eval.yaml", "w") as out:
        out.write("description: generated benchmark suite\n")
        if kind == "trials":  # mean: every trial runs (pass_at_k would stop at the first, passing, one)
            out.write("execution:\n  trials: {count: 1, strategy: mean}\n")
        out.write("tests:\n")
        for i in range(n):
            out.write(f"  - id: case-{i:05d}\n    criteria: Names Paris and the Seine (case {i})\n"
                      f"    input: What is the capital of France, and which river runs through it? ({i})\n"
                      f"    expected_output: Paris, on the Seine.\n{evaluator}")


AGENT_KINDS = ("trajectory", "contains", "rubrics", "judged")
CLI_COMMAND = "echo 'Paris is the capital of France, on the Seine.'"
"""The cli suite's agent: one /bin/sh per case, as the gate (and AgentV) start a `cli` target."""
JUDGED_KINDS = ("rubrics", "judged")
"""`rubrics`: contains + tool_trajectory + a rubric checklist judge; `judged`: contains + one llm_judge."""
CHECKS = ('{"checks": [{"id": "capital", "satisfied": true, "reasoning": "says Paris"}, '
          '{"id": "river", "satisfied": true, "reasoning": "says Seine"}], "overall_reasoning": "Both."}')
RUBRIC_JUDGE_PATH = "/rubric-judge/v1/chat/completions"
AGENT_PATH = "/agent/v1/chat/completions"
AGENT_REPLY = {
    "id": "chatcmpl-bench", "model": "bench-agent",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "Paris is the capital of France, on the Seine.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "capital"}'}},
                       {"id": "c2", "type": "function", "function": {"name": "fetch", "arguments": '{"url": "x"}'}}]}}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 12}}


GATE_COMMAND: list[str] = []
"""The command every run uses (`--gate-ref`: agentv-gate as it was at a commit); empty: the installed one."""

LAST_CPU: dict[str, float] = {}
"""CPU seconds (user + system, the judges it reaped included) of the last `run_gate`."""


LAUNCHER = """\
import json, os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump({"wall": time.perf_counter() - started, "status": status, "maxrss_kb": usage.ru_maxrss,
               "cpu": usage.ru_utime + usage.ru_stime}, out)
"""
"""Starts the gate from a small process. A child's ru_maxrss counts the image it was forked from
(kept across exec), so a gate forked straight from this script, which by then holds every request
the loopback server logged, reported this script's size (107 MB for a cached 5000-case run whose
own peak is 51 MB)."""


def run_gate(folder: Path, workers: int, *extra: str, env: dict[str, str] | None = None,
             gate: list[str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MB, exit code) of one `agentv-gate run` in `folder` (`gate`: another command)."""
    argv = [*(gate or GATE_COMMAND or [GATE]), "run", "evals", "--workers", str(workers), "--output-dir", "out",
            "--quiet", *extra]
    report = folder / "gate.rusage.json"
    with open(folder / "gate.log", "w") as log:
        subprocess.run([sys.executable, "-c", LAUNCHER, str(report), *argv], cwd=folder, stdout=log,
                       stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, check=True)
    measured = json.loads(report.read_text())
    LAST_CPU["gate"] = measured["cpu"]
    return measured["wall"], measured["maxrss_kb"] / 1024, os.waitstatus_to_exitcode(measured["status"])


def check_results(folder: Path, n: int) -> float:
    """Fail loudly unless every case ran and passed; returns the seconds from first case start to last end.

    Wall time minus that window is the fixed cost of a run: interpreter start, imports, loading
    the suite, writing JUnit at the end.
    """
    lines = (folder / "out" / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    bad = [row for row in rows if row["verdict"] != "pass"]
    if len(lines) != n or bad:
        log = (folder / "gate.log").read_text()[-2000:]
        raise SystemExit(f"benchmark run is wrong: {len(lines)} rows for {n} cases, {len(bad)} not passing\n{log}")
    starts = [datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00")).timestamp() for row in rows]
    ends = [start + row["duration_ms"] / 1000 for start, row in zip(starts, rows, strict=True)]
    return max(ends) - min(starts)


# ---------------------------------------------------------------- bare costs


def capture_payload(folder: Path, kind: str = "code", env: dict[str, str] | None = None) -> bytes:
    """The exact stdin one case's judge gets, from a one-case run of the real tool."""
    probe = folder / f"probe-{kind}"
    write_project(probe, 1, kind, None)
    dump = probe / "payload.json"
    _, _, code = run_gate(probe, 1, "--no-cache", env={**(env or {}), "BENCH_PAYLOAD_OUT": str(dump)})
    if code != 0 or not dump.exists():
        raise SystemExit(f"probe run failed:\n{(probe / 'gate.log').read_text()}")
    return dump.read_bytes()


PYTHON3 = shutil.which("python3", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def spawn_judge(judge: Path, payload: bytes, python: str | None = None) -> None:
    """The least a runner must do per judge: start it, write the payload, read the verdict, reap it."""
    proc = subprocess.Popen([python or PYTHON3 or sys.executable, str(judge)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=judge.parent)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload)
    proc.stdin.close()
    out = proc.stdout.read()
    proc.stdout.close()
    if proc.wait() != 0 or b"score" not in out:
        raise SystemExit(f"bare judge failed: {out[:500]!r}")


def one_spawn_seconds(judge: Path, payload: bytes, samples: int = 30) -> float:
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        spawn_judge(judge, payload)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def bare_spawns(judge: Path, payload: bytes, n: int, workers: int) -> float:
    """Wall seconds for N bare spawns; their CPU (ours and the judges') goes to LAST_CPU["bare"]."""
    cpu = _cpu_seconds()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda _: spawn_judge(judge, payload), range(n)))
    wall = time.perf_counter() - started
    LAST_CPU["bare"] = _cpu_seconds() - cpu
    return wall


def spawn_target(folder: Path) -> None:
    """The least a runner must do per `cli` case: the agent's command under /bin/sh, its answer read."""
    done = subprocess.run(["/bin/sh", "-c", CLI_COMMAND], stdin=subprocess.DEVNULL, capture_output=True, cwd=folder)
    if done.returncode != 0 or b"Paris" not in done.stdout:
        raise SystemExit(f"bare target failed: {done.stdout[:500]!r}")


def bare_cli_cases(folder: Path, payload: bytes, python: str, n: int, workers: int) -> float:
    """Wall seconds for N bare cases (the agent's command, then the judge, started fresh) at the same
    concurrency; their CPU goes to LAST_CPU["bare"]."""
    cpu = _cpu_seconds()
    started = time.perf_counter()

    def one(_: int) -> None:
        spawn_target(folder / "evals")
        spawn_judge(folder / "judge.py", payload, python)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, range(n)))
    wall = time.perf_counter() - started
    LAST_CPU["bare"] = _cpu_seconds() - cpu
    return wall


def real_python3() -> str:
    """The interpreter the first `python3` on PATH runs (through a shim, if it is one)."""
    return subprocess.run(["python3", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True,
                          check=True).stdout.strip()


def bench_cli(work: Path, n: int, workers: int, repeat: int, which: tuple[str, ...] = ("real", "shim")) -> list[Measure]:
    """A `cli` target (a /bin/sh command per case) and a `python3 judge.py` code judge, every process
    started fresh, against the floor of the same fresh spawns without the gate (target, then judge, per
    case, at the same concurrency, with the real interpreter): once with the real interpreter first on
    PATH, once with a pyenv-like shim first on PATH (tests/helpers/fake_pyenv.py: a shim script, a
    `pyenv exec` that reads the version files, a versions/ folder), whose resolution must be paid once."""
    from tests.helpers.fake_pyenv import FakePyenv

    python = real_python3()
    base_path = os.environ.get("PATH", "")
    pyenv = FakePyenv(work / "pyenv", python)
    paths = {label: path for label, path in (("real", f"{Path(python).parent}{os.pathsep}{base_path}"),
                                             ("shim", f"{pyenv.shims}{os.pathsep}{base_path}")) if label in which}
    folder = work / f"cli-{n}"
    write_project(folder, n, "cli", None)
    payload = capture_payload(work, "cli", {"PATH": f"{Path(python).parent}{os.pathsep}{base_path}"})
    measured: dict[str, list[tuple[float, float, float, int, float]]] = {label: [] for label in paths}
    bares = []
    for _ in range(repeat):
        for label, path in paths.items():
            pyenv.calls.write_text("")
            wall_i, rss_i, code = run_gate(folder, workers, "--no-cache", env={"PATH": path})
            if code != 0:
                raise SystemExit((folder / "gate.log").read_text()[-2000:])
            shim_runs = len(pyenv.calls.read_text().splitlines())
            measured[label].append((wall_i, rss_i, LAST_CPU["gate"], shim_runs, check_results(folder, n)))
        bares.append((bare_cli_cases(folder, payload, python, n, workers), LAST_CPU["bare"]))
    bare, bare_cpu = min(bares)
    out = []
    for label in paths:
        wall, rss, cpu, shim_runs, window = min(measured[label])
        out.append(Measure(f"cli+judge ({label} python3)", n, workers, wall, n / wall, rss, bare, bare,
                           (wall - bare) / n * 1000,
                           {"x_floor": round(wall / bare, 3), "fixed_s": round(wall - window, 2),
                            "in_run_x_floor": round(window / bare, 3), "cpu_ms_case": round(cpu / n * 1000, 1),
                            "floor_cpu_ms_case": round(bare_cpu / n * 1000, 1),
                            "gate_cpu_ms_case": round((cpu - bare_cpu) / n * 1000, 1), "shim_runs": shim_runs}))
    return out


def bench_cli_contains(work: Path, n: int, workers: int, repeat: int) -> Measure:
    """The cli suite's target with a `contains` assertion and no judge, against the floor of its target
    spawns alone: the gate's own work per case, whatever a judge's start costs (comparable across
    versions that started judges differently)."""
    folder = work / f"cli-contains-{n}"
    write_project(folder, n, "cli-contains", None)
    runs, bares = [], []
    for _ in range(repeat):
        wall_i, rss_i, code = run_gate(folder, workers, "--no-cache")
        if code != 0:
            raise SystemExit((folder / "gate.log").read_text()[-2000:])
        runs.append((wall_i, rss_i, LAST_CPU["gate"], check_results(folder, n)))
        cpu = _cpu_seconds()
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(lambda _: spawn_target(folder / "evals"), range(n)))
        bares.append((time.perf_counter() - started, _cpu_seconds() - cpu))
    wall, rss, gate_cpu, window = min(runs)
    bare, bare_cpu = min(bares)
    return Measure("cli+contains", n, workers, wall, n / wall, rss, bare, bare, (wall - bare) / n * 1000,
                   {"x_floor": round(wall / bare, 3), "fixed_s": round(wall - window, 2),
                    "in_run_x_floor": round(window / bare, 3), "cpu_ms_case": round(gate_cpu / n * 1000, 2),
                    "floor_cpu_ms_case": round(bare_cpu / n * 1000, 2),
                    "gate_cpu_ms_case": round((gate_cpu - bare_cpu) / n * 1000, 2)})


# ---------------------------------------------------------------- scenarios


def bench_code(work: Path, n: int, workers: int, cores: int, payload: bytes, spawn_s: float, repeat: int) -> Measure:
    """Best of `repeat` alternating gate and bare runs: on a shared machine the minimum is the signal."""
    folder = work / f"code-{n}"
    write_project(folder, n, "code", None)
    runs, bares = [], []
    for _ in range(repeat):
        wall_i, rss_i, code = run_gate(folder, workers, "--no-cache")
        if code != 0:
            raise SystemExit((folder / "gate.log").read_text()[-2000:])
        runs.append((wall_i, rss_i, check_results(folder, n), LAST_CPU["gate"]))
        bares.append((bare_spawns(folder / "judge.py", payload, n, workers), LAST_CPU["bare"]))
    wall, rss, window, gate_cpu = min(runs)
    bare, bare_cpu = min(bares)
    ideal = n * spawn_s / cores
    # CPU time barely moves when other processes share the machine, unlike wall time: the
    # difference per case is the most robust figure for what agentv-gate itself costs.
    return Measure("code", n, workers, wall, n / wall, rss, bare, ideal, (wall - bare) / n * 1000,
                   {"x_ideal": round(wall / ideal, 2), "x_bare": round(wall / bare, 2),
                    "fixed_s": round(wall - window, 2), "in_run_x_bare": round(window / bare, 2),
                    "cpu_ms_case": round(gate_cpu / n * 1000, 1), "bare_cpu_ms_case": round(bare_cpu / n * 1000, 1)})


def bench_llm(work: Path, n: int, workers: int, latency: float, repeat: int) -> list[Measure]:
    """Cold runs (fresh cache folder each, so every judge call goes to the server), then one warm run."""
    folder = work / f"llm-{n}"
    with FakeLLMServer() as server:
        server.set_default(JUDGE_PATH, FakeReply.openai(VERDICT, delay=latency))
        write_project(folder, n, "llm", server.url)
        colds = []
        for attempt in range(repeat):
            cache = str(folder / f"cache-{attempt}")
            before = len(server.requests)
            cold_i, rss_i, code = run_gate(folder, workers, "--cache-dir", cache)
            if code != 0:
                raise SystemExit((folder / "gate.log").read_text()[-2000:])
            colds.append((cold_i, rss_i, check_results(folder, n)))
            sent = len(server.requests) - before
            if sent != n:
                raise SystemExit(f"llm bench: {sent} judge calls for {n} cases on a cold run")
        cold, cold_rss, window = min(colds)
        before = len(server.requests)
        warm, warm_rss, code = run_gate(folder, workers, "--cache-dir", cache)
        check_results(folder, n)
        resent = len(server.requests) - before
    if resent != 0 or code != 0:
        raise SystemExit(f"llm bench: {resent} judge calls on the cached run (expected 0)")
    ideal = n * latency / workers
    target_rate = workers / latency
    return [
        Measure("llm", n, workers, cold, n / cold, cold_rss, ideal, ideal, (cold - ideal) / n * 1000,
                {"x_ideal": round(cold / ideal, 3), "of_target_rate": f"{n / cold / target_rate:.1%}",
                 "fixed_s": round(cold - window, 2), "in_run_of_target_rate": f"{n / window / target_rate:.1%}"}),
        Measure("llm-cached", n, workers, warm, n / warm, warm_rss, 0.0, 0.0, warm / n * 1000,
                {"requests_sent": resent}),
    ]


def measure_agent_kinds(work: Path, n: int, workers: int, repeat: int, kinds: tuple[str, ...]
                        ) -> dict[str, tuple[float, float, float]]:
    """(wall, peak RSS, CPU) of the best of `repeat` runs of each agent suite `kind`, all against one
    loopback server: the tool-calling agent, a plain judge and a rubric judge answering at once."""
    with FakeLLMServer() as server:
        server.set_default(AGENT_PATH, FakeReply.json(AGENT_REPLY))
        server.set_default(JUDGE_PATH, FakeReply.openai(VERDICT))
        server.set_default(RUBRIC_JUDGE_PATH, FakeReply.openai(CHECKS))
        measured: dict[str, tuple[float, float, float]] = {}
        for kind in kinds:
            folder = work / f"{kind}-{n}"
            write_project(folder, n, kind, server.url)
            runs = []
            for _ in range(repeat):
                wall_i, rss_i, code = run_gate(folder, workers, "--no-cache")
                if code != 0:
                    raise SystemExit((folder / "gate.log").read_text()[-2000:])
                check_results(folder, n)
                runs.append((wall_i, rss_i, LAST_CPU["gate"]))
            measured[kind] = min(runs)
    return measured


def compared(label: str, n: int, workers: int, measured: dict[str, tuple[float, float, float]], kind: str, base: str,
             base_note: str) -> Measure:
    """`kind` against `base`: both pay the same calls, so the difference per case is the grading itself."""
    wall, rss, cpu = measured[kind]
    base_wall, _, base_cpu = measured[base]
    return Measure(label, n, workers, wall, n / wall, rss, base_wall, base_wall, (wall - base_wall) / n * 1000,
                   {"cpu_ms_case": round(cpu / n * 1000, 2), base_note: round(base_cpu / n * 1000, 2),
                    "extra_cpu_ms_case": round((cpu - base_cpu) / n * 1000, 2)})


def bench_trajectory(work: Path, n: int, workers: int, repeat: int) -> Measure:
    """A tool_trajectory + contains suite against the same suite with `contains` alone, one OpenAI-compatible
    agent on the loopback server answering every case with two tool calls at once."""
    measured = measure_agent_kinds(work, n, workers, repeat, ("trajectory", "contains"))
    return compared("trajectory", n, workers, measured, "trajectory", "contains", "contains_cpu_ms_case")


def bench_rubrics(work: Path, n: int, workers: int, repeat: int) -> Measure:
    """contains + tool_trajectory + a rubric checklist judge, against contains + one plain llm_judge:
    the same agent call and one judge call each, so the difference per case is what the trajectory
    and the rubric prompt and reply cost."""
    measured = measure_agent_kinds(work, n, workers, repeat, JUDGED_KINDS)
    return compared("trajectory+rubrics", n, workers, measured, "rubrics", "judged", "contains_judge_cpu_ms_case")


RATE_LIMITED_BASELINE = "19ca074"
"""The last commit before per-target rate limiting: fixed workers, each 429 retried per request."""


def baseline_gate(work: Path, ref: str) -> list[str]:
    """A command running agentv-gate as it was at `ref` (its package extracted from git), on our interpreter."""
    folder = work / f"baseline-{ref}"
    folder.mkdir(exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "agentv_gate"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(folder)!r}); import agentv_gate.cli as c; "
            f"assert c.__file__.startswith({str(folder)!r}); sys.exit(c.main())"]


def bench_ratelimited(work: Path, n: int, workers: int, rpm: int, tpm: int, latency: float,
                      baseline_ref: str, burst: float | None = None, modes: tuple[str, ...] = ("baseline", "learned",
                                                                                            "max_rpm")) -> list[Measure]:
    """N LLM-judged cases against a judge limited to `rpm` (burst: one second's worth unless given) and
    `tpm`, answering 429 with OpenAI's headers: today's scheduling, then learning the limit from the
    headers alone, then with `max_rpm` set. Ideal: the burst at once, the rest at the rate."""
    ideal = max(0.0, n - (burst if burst is not None else max(1.0, rpm / 60))) / rpm * 60
    runs = [(f"ratelimited-{mode}", (f"    max_rpm: {rpm}",) if mode == "max_rpm" else (),
             baseline_gate(work, baseline_ref) if mode == "baseline" else None) for mode in modes]
    measures = []
    for label, keys, gate in runs:
        folder = work / f"{label}-{n}"
        with FakeLLMServer() as server:
            limited = RateLimited(FakeReply.openai(VERDICT, delay=latency), rpm=rpm, tpm=tpm, burst=burst)
            server.set_default(JUDGE_PATH, limited)
            write_project(folder, n, "llm", server.url, keys)
            wall, rss, code = run_gate(folder, workers, "--no-cache", gate=gate)
            refused, answered = limited.refused, limited.answered
        rows = [json.loads(line) for line in (folder / "out" / "results.jsonl").read_text().splitlines()]
        errored = sum(row["verdict"] == "error" for row in rows)
        sent = refused + answered
        starts = [datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00")).timestamp() for row in rows]
        window = max(start + row["duration_ms"] / 1000 for start, row in zip(starts, rows, strict=True)) - min(starts)
        measures.append(Measure(label, n, workers, wall, n / wall, rss, ideal, ideal, (wall - ideal) / n * 1000,
                                {"x_ideal": round(wall / ideal, 3), "in_run_x_ideal": round(window / ideal, 3),
                                 "fixed_s": round(wall - window, 2), "errored": errored, "exit": code,
                                 "requests": sent, "answered_429": f"{refused / sent:.1%}" if sent else "-"}))
        print_table(measures[-1:], False)
    return measures


def bench_mock(work: Path, n: int, workers: int, repeat: int) -> Measure:
    """A `mock` target and a `contains` assertion: no judge, no network, nothing to wait for. What is
    left is the tool itself: interpreter and imports, loading the suite, scoring, the reports. "bare"
    is the interpreter with `import agentv_gate.commands.run` and nothing run: the floor a run of
    this code cannot go below without importing less."""
    folder = work / f"mock-{n}"
    write_project(folder, n, "mock", None)
    runs = []
    for _ in range(repeat):
        wall_i, rss_i, code = run_gate(folder, workers)
        if code != 0:
            raise SystemExit((folder / "gate.log").read_text()[-2000:])
        window = check_results(folder, n)
        runs.append((wall_i, rss_i, LAST_CPU["gate"], window))
    wall, rss, cpu, window = min(runs)
    imports = []
    for _ in range(max(repeat, 3)):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import agentv_gate.commands.run"], check=True)
        imports.append(time.perf_counter() - started)
    floor = min(imports)
    return Measure("mock", n, workers, wall, n / wall, rss, floor, floor, (wall - floor) / n * 1000,
                   {"cpu_s": round(cpu, 3), "import_only_s": round(floor, 3), "cases_window_s": round(window, 3)})


def bench_trials(work: Path, n: int, workers: int, repeat: int) -> Measure:
    """The code suite with `execution.trials` (strategy `mean`) run at one trial and at `--trials 3`:
    each trial is a full target + judge run, so three should cost three times one, plus nothing
    (the bar: at most 3.1x). "bare" is the one-trial run."""
    folder = work / f"trials-{n}"
    write_project(folder, n, "trials", None)
    measured: dict[int, tuple[float, float, float]] = {}
    for count in (1, 3):
        runs = []
        for _ in range(repeat):
            wall_i, rss_i, code = run_gate(folder, workers, "--no-cache", "--trials", str(count))
            if code != 0:
                raise SystemExit((folder / "gate.log").read_text()[-2000:])
            check_results(folder, n)
            runs.append((wall_i, rss_i, LAST_CPU["gate"]))
        measured[count] = min(runs)
    trials = [len(json.loads(line)["trials"]) for line in (folder / "out" / "results.jsonl").read_text().splitlines()]
    if set(trials) != {3}:
        raise SystemExit(f"trials bench is wrong: rows with {sorted(set(trials))} trials, expected 3")
    wall, rss, cpu = measured[3]
    one_wall, _, one_cpu = measured[1]
    return Measure("trials x3", n, workers, wall, n / wall, rss, one_wall, 3 * one_wall, (wall - 3 * one_wall) / n * 1000,
                   {"x_one_trial": round(wall / one_wall, 2), "cpu_x_one_trial": round(cpu / one_cpu, 2),
                    "cpu_ms_case": round(cpu / n * 1000, 2)})


# ---------------------------------------------------------------- output


def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cores (nproc)": str(os.cpu_count()), "python": platform.python_version(), "cpu": model,
            "os": platform.platform()}


def print_table(measures: list[Measure], markdown: bool) -> None:
    head = ["suite", "N", "workers", "wall s", "cases/s", "peak RSS MB", "bare s", "ideal s",
            "overhead ms/case", "notes"]
    rows = [[m.kind, str(m.cases), str(m.workers), f"{m.wall_s:.2f}", f"{m.cases_per_s:.1f}",
             f"{m.peak_rss_mb:.0f}", f"{m.bare_s:.2f}", f"{m.ideal_s:.2f}", f"{m.overhead_ms_per_case:.2f}",
             ", ".join(f"{k}={v}" for k, v in m.notes.items())] for m in measures]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for row in [head, *rows]:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200,1000,5000", help="comma-separated case counts")
    parser.add_argument("--kinds", default="code,llm",
                        help="code, llm, cli, mock, trajectory, rubrics, ratelimited, trials (comma-separated)")
    parser.add_argument("--rpm", type=int, default=600, help="the ratelimited judge's requests per minute")
    parser.add_argument("--tpm", type=int, default=200000, help="the ratelimited judge's tokens per minute")
    parser.add_argument("--burst", type=float, default=None,
                        help="the ratelimited judge's burst (requests it holds; default: one second's worth)")
    parser.add_argument("--modes", default="baseline,learned,max_rpm",
                        help="the ratelimited runs: baseline, learned, max_rpm (comma-separated)")
    parser.add_argument("--python3", default="real,shim",
                        help="the cli suite's python3 first on PATH: real, shim (a pyenv-like one), or both")
    parser.add_argument("--gate-ref", default=None,
                        help="run agentv-gate as it was at this git ref (its package extracted) for every suite")
    parser.add_argument("--baseline", default=RATE_LIMITED_BASELINE,
                        help="git ref whose agentv-gate is the ratelimited suite's 'today' (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=None,
                        help="agentv-gate --workers for both suites (default: the tool's own default)")
    parser.add_argument("--code-workers", type=int, default=None, help="override --workers for the code suite")
    parser.add_argument("--llm-workers", type=int, default=None, help="override --workers for the llm suite")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="the loopback judge's latency")
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure; the fastest is reported")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--keep", action="store_true", help="keep the generated suites (printed path)")
    args = parser.parse_args()

    from agentv_gate.orchestrator import RunSettings

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    kinds = {k.strip() for k in args.kinds.split(",") if k.strip()}
    default_workers = args.workers or RunSettings().workers
    code_workers = args.code_workers or default_workers
    llm_workers = args.llm_workers or default_workers
    cores = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="agentv-gate-bench-"))
    if args.gate_ref:
        GATE_COMMAND[:] = baseline_gate(work, args.gate_ref)
    info = machine()
    print("machine: " + "; ".join(f"{k} {v}" for k, v in info.items()), flush=True)
    measures: list[Measure] = []
    try:
        if "code" in kinds:
            payload = capture_payload(work)
            spawn_s = one_spawn_seconds(work / "probe-code" / "judge.py", payload)
            print(f"one judge spawn (median of 30, alone): {spawn_s * 1000:.1f} ms; payload {len(payload)} bytes",
                  flush=True)
            info["one judge spawn ms"] = f"{spawn_s * 1000:.1f}"
        for n in sizes:
            if "code" in kinds:
                measures.append(bench_code(work, n, code_workers, cores, payload, spawn_s, args.repeat))
                print_table(measures[-1:], False)
            if "llm" in kinds:
                measures.extend(bench_llm(work, n, llm_workers, args.latency_ms / 1000, args.repeat))
                print_table(measures[-2:], False)
            if "trajectory" in kinds:
                measures.append(bench_trajectory(work, n, default_workers, args.repeat))
                print_table(measures[-1:], False)
            if "rubrics" in kinds:
                measures.append(bench_rubrics(work, n, default_workers, args.repeat))
                print_table(measures[-1:], False)
            if "ratelimited" in kinds:
                measures.extend(bench_ratelimited(work, n, llm_workers, args.rpm, args.tpm, args.latency_ms / 1000,
                                                  args.baseline, args.burst, tuple(args.modes.split(","))))
            if "cli" in kinds:
                measures.extend(bench_cli(work, n, code_workers, args.repeat, tuple(args.python3.split(","))))
                print_table(measures[-2:], False)
            if "cli-contains" in kinds:
                measures.append(bench_cli_contains(work, n, code_workers, args.repeat))
                print_table(measures[-1:], False)
            if "mock" in kinds:
                measures.append(bench_mock(work, n, default_workers, args.repeat))
                print_table(measures[-1:], False)
            if "trials" in kinds:
                measures.append(bench_trials(work, n, code_workers, args.repeat))
                print_table(measures[-1:], False)
        print()
        print_table(measures, args.markdown)
        if args.json:
            args.json.write_text(json.dumps({"machine": info, "results": [asdict(m) for m in measures]}, indent=2))
    finally:
        if args.keep:
            print(f"suites kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
