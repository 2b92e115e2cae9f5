"""`agentv-gate judge-check` through the real CLI: a results file's answers judged again k times by a
loopback judge whose verdicts are scripted per case and call, against a 20-case labels file whose
kappa and confusion matrix are computed by hand below."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer
from tests.helpers.files import make_repo, write
from tests.helpers.noisy_judge import NoisyJudge, case_marker
from tests.helpers.reports import RESULTS, read_rows

CHAT = "/v1/chat/completions"
FAST = {"retry_initial_delay_ms": 1, "retry_max_delay_ms": 5, "retry_jitter_ms": 1, "timeout_seconds": 10}

# 20 cases. The humans pass c0..c11 (12) and fail c12..c19 (8). The judge's majority verdict:
#   human pass, judge pass: c0..c8   (9)      human pass, judge fail: c9..c11  (3)
#   human fail, judge pass: c12, c13 (2)      human fail, judge fail: c14..c19 (6)
# p_o = 15/20 = 0.75; judge passes 11/20, humans 12/20; p_e = 0.55*0.6 + 0.45*0.4 = 0.51;
# kappa = (0.75 - 0.51) / (1 - 0.51) = 0.24 / 0.49 = 0.489796 (to 6 places).
JUDGE_PASSES = {f"c{n}" for n in (*range(9), 12, 13)}
FLIPPING = {"c3": (1, 1, 0, 1, 0), "c10": (0, 1, 0, 1, 0), "c15": (0, 0, 0, 0, 1)}
"""Per call: 1 pass, 0 fail. c3 and c10 split 3/5 and 2/5 (most), c15 1/5; every other case is unanimous."""
KAPPA = 0.24 / 0.49


def verdict(name: str, k: int) -> float:
    if name in FLIPPING:
        return float(FLIPPING[name][k])
    return 1.0 if name in JUDGE_PASSES else 0.0


def project(tmp_path: Path, judge_url: str) -> Path:
    targets = [{"name": "default", "provider": "mock", "response": "An answer.", "judge_target": "judge"},
               {"name": "judge", "provider": "openai", "base_url": judge_url, "model": "grader", **FAST}]
    root = make_repo(tmp_path / "repo", yaml.safe_dump({"targets": targets}, sort_keys=False))
    tests = "\n".join(f"  - id: c{n}\n    input: 'Q {case_marker(f'c{n}')}'\n    criteria: Good\n"
                      f"    assert:\n      - {{name: tone, type: llm_judge}}\n      - {{name: has-answer, type: contains, "
                      f"value: answer}}" for n in range(20))
    write(root / "evals/tone.eval.yaml", f"tests:\n{tests}\n")
    write(root / "labels.jsonl", "".join(json.dumps({"eval_file": "evals/tone.eval.yaml", "test_id": f"c{n}",
                                                     "evaluator": "tone", "label": "pass" if n < 12 else "fail"}) + "\n"
                                         for n in range(20)))
    return root


def results_of_a_run(root: Path, server: FakeLLMServer) -> Path:
    server.set_default(CHAT, NoisyJudge(0.0))  # the run whose answers are checked: every verdict passes
    proc = run_cli("run", "evals", "--no-cache", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = root / "main-results.jsonl"
    kept.write_text((root / RESULTS).read_text(encoding="utf-8"), encoding="utf-8")
    return kept


def test_judge_check_gives_the_hand_computed_kappa_and_flags_the_flipping_cases(tmp_path: Path) -> None:
    server = FakeLLMServer()
    root = project(tmp_path, server.url)
    results = results_of_a_run(root, server)
    run_calls = len(server.requests_for(CHAT))
    server.set_default(CHAT, NoisyJudge(0.0, scores=verdict))
    proc = run_cli("judge-check", str(results), "evals", "--labels", "labels.jsonl", "--json", "--workers", "4",
                   cwd=root)
    server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(server.requests_for(CHAT)) - run_calls == 20 * 5, "5 fresh calls a case, none to the target"
    data: dict[str, Any] = json.loads(proc.stdout)
    assert data["asks"] == 5 and [j["judge"] for j in data["judges"]] == ["tone"], "only the LLM judge is checked"
    tone = data["judges"][0]
    assert tone["cases"] == 20 and tone["calls"] == 100 and tone["errors"] == 0
    assert tone["flip_rate"] == 3 / 20
    assert [c["eval_id"] for c in tone["flipping"]] == ["c10", "c3", "c15"]  # 2/5 and 3/5 split evenly, then 1/5
    assert tone["flipping"][1]["passes"] == 3 and tone["flipping"][1]["scores"] == [1.0, 1.0, 0.0, 1.0, 0.0]
    labels = tone["labels"]
    assert labels["labelled"] == 20
    assert labels["accuracy"] == 0.75
    assert labels["kappa"] == round(KAPPA, 6) == 0.489796
    assert labels["confusion"] == {"pass": {"pass": 9, "fail": 3}, "fail": {"pass": 2, "fail": 6}}
    every = [verdict(f"c{n}", k) for n in range(20) for k in range(5)]
    assert tone["mean_score"] == round(sum(every) / 100, 6)
    assert json.loads((root / ".agentv-gate/judge-check.json").read_text(encoding="utf-8")) == data
    page = html.unescape((root / ".agentv-gate/report.html").read_text(encoding="utf-8"))
    assert "Judges (each case asked 5 times)" in page and "Flipping most: tone" in page
    assert "c10 (evals/tone.eval.yaml): 2/5 passed" in page


def test_the_table_names_the_flipping_cases_and_the_confusion_matrix(tmp_path: Path) -> None:
    server = FakeLLMServer()
    root = project(tmp_path, server.url)
    results = results_of_a_run(root, server)
    server.set_default(CHAT, NoisyJudge(0.0, scores=verdict))
    proc = run_cli("judge-check", str(results), "--labels", "labels.jsonl", "-k", "5", cwd=root)
    server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["judge", "cases", "asks", "flip", "rate", "mean", "score", "spread", "errors",
                                "accuracy", "kappa"]
    assert lines[1].split()[:4] == ["tone", "20", "5", "15.0%"] and lines[1].split()[-2:] == ["75.0%", "0.490"]
    assert "flipping most (tone): c10 (2/5 passed), c3 (3/5 passed), c15 (1/5 passed)" in proc.stdout
    assert ("confusion (tone, 20 labelled): human pass: judge pass 9, judge fail 3; human fail: judge pass 2, "
            "judge fail 6") in proc.stdout


def test_a_steady_judge_flips_nothing_and_a_label_naming_no_case_is_said(tmp_path: Path) -> None:
    server = FakeLLMServer()
    root = project(tmp_path, server.url)
    results = results_of_a_run(root, server)
    with (root / "labels.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"eval_file": "evals/tone.eval.yaml", "test_id": "gone", "evaluator": "tone",
                             "score": 0.9}) + "\n")
    proc = run_cli("judge-check", str(results), "--labels", "labels.jsonl", "--json", "-k", "3", cwd=root)
    server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tone = json.loads(proc.stdout)["judges"][0]
    assert tone["flip_rate"] == 0 and tone["flipping"] == [] and tone["spread"] == 0
    assert tone["labels"]["kappa"] == 0.0  # the judge passes all 20; the humans 12: agreement is chance's
    assert "labels.jsonl:21: no case 'gone' of evals/tone.eval.yaml judged by 'tone'" in proc.stderr


def test_a_malformed_label_is_refused_at_its_line(tmp_path: Path) -> None:
    server = FakeLLMServer()
    root = project(tmp_path, server.url)
    results = results_of_a_run(root, server)
    write(root / "bad.jsonl", '{"eval_file": "evals/tone.eval.yaml", "test_id": "c1", "evaluator": "tone", '
          '"label": "yes"}\n')
    proc = run_cli("judge-check", str(results), "--labels", "bad.jsonl", cwd=root)
    server.close()
    assert proc.returncode == 2
    assert "bad.jsonl:1: 'label' must be \"pass\" or \"fail\", got 'yes'" in proc.stderr
    assert read_rows(results)


def test_judge_check_refuses_what_it_cannot_measure(tmp_path: Path) -> None:
    server = FakeLLMServer()
    root = project(tmp_path, server.url)
    results = results_of_a_run(root, server)
    for asks, code in (("0", 2), ("51", 2)):
        proc = run_cli("judge-check", str(results), "-k", asks, cwd=root)
        assert proc.returncode == code and f"--asks {asks} is not in 1..50" in proc.stderr
    write(root / "evals/tone.eval.yaml", "tests:\n  - id: c0\n    input: Q\n    criteria: Good\n    assert:\n"
          "      - {name: has-answer, type: contains, value: answer}\n")
    proc = run_cli("judge-check", str(results), cwd=root)
    server.close()
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "is graded by an LLM judge of the eval files given" in proc.stderr
