"""report.html for a reviewer: every case, passed ones too, shows its input, criteria,
expected output, answer and a row per evaluator (name, type, score, weight, verdict, hits, misses,
reasoning); the run's metadata is at the top; long paths wrap at a `/`. Checked in headless Chromium
at a phone's width and a desktop's (`.ci/run` installs it, so CI runs these rather than skipping).
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest

from agentv_gate import __version__
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.report.test_html import CHROMIUM, data_block, needs_browser, png_is_not_blank

TARGETS = """\
targets:
  - name: default
    provider: mock
    response: Paris is the capital of France.
"""

JUDGE = """\
import json, sys
payload = json.load(sys.stdin)
ok = "Paris" in payload["answer"]
print(json.dumps({"score": 1.0 if ok else 0.0, "hits": ["names Paris"] if ok else [],
                  "misses": [] if ok else ["Paris not named"], "reasoning": "looked for Paris"}))
"""

LONG = "a-very-long-folder-name-that-would-never-fit-on-a-phone-screen"

SUITE = """\
tests:
  - id: capital
    criteria: Names Paris as the capital, in one sentence
    input: What is the capital of France?
    expected_output: Paris is the capital of France.
    assert:
      - name: names-paris
        type: contains
        value: Paris
        weight: 2
      - name: judge-paris
        type: code_judge
        script: python3 judges/paris.py
  - id: river
    criteria: Names the Seine
    input: Which river flows through Paris?
    assert:
      - name: names-seine
        type: contains
        value: Seine
        weight: 3
      - name: judge-paris
        type: code_judge
        script: python3 judges/paris.py
"""

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("review") / "repo", TARGETS)
    write(repo / "judges" / "paris.py", JUDGE)
    write(repo / "evals" / LONG / "geo.eval.yaml", SUITE)
    proc = run_cli("run", "evals", "--no-cache", cwd=repo, env={"GITHUB_SHA": SHA})
    assert proc.returncode == 1, proc.stdout + proc.stderr  # river fails
    return repo / ".agentv-gate" / "report.html"


def test_the_page_carries_every_case_s_review_and_the_run_metadata(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    meta = text.split('<dl class="meta" id="run">', 1)[1].split("</dl>", 1)[0]
    assert f"<dt>Commit</dt><dd>{SHA}</dd>" in meta
    assert f"<dt>agentv-gate</dt><dd>{html.escape(__version__)}</dd>" in meta
    assert "<dt>Targets</dt><dd>default</dd>" in meta
    assert re.search(r"<dt>Wall time</dt><dd>\d+\.\d s</dd>", meta)
    assert re.search(r"<dt>Started</dt><dd>\d{4}-\d\d-\d\dT", meta)
    rows = {r[1]: r for r in json.loads(data_block(text))["rows"]}
    capital = rows["capital"]
    assert capital[0] == "pass" and capital[11] == "Paris is the capital of France."  # a passed case's answer too
    review = capital[12]
    assert review["input"] == [["user", "What is the capital of France?"]]
    assert review["criteria"] == "Names Paris as the capital, in one sentence"
    assert review["expected"] == [["assistant", "Paris is the capital of France."]]
    assert [e[:5] for e in review["evaluators"]] == [["names-paris", "contains", 1.0, 2.0, "pass"],
                                                     ["judge-paris", "code_judge", 1.0, 1.0, "pass"]]
    assert review["evaluators"][1][5] == ["names Paris"] and review["evaluators"][1][7] == "looked for Paris"


def _browser(page: Path, tmp_path: Path, width: int, height: int, *flags: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / f"profile-{width}"
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-extensions", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                           f"--window-size={width},{height}", *flags, page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=180)


def _case(dom: str, case_id: str) -> str:
    """The drawn row of one case, its unfolded details and evaluator table included."""
    for chunk in dom.split('<tr class="case ')[1:]:
        if f'<td class="id">{case_id}</td>' in chunk:
            return chunk
    raise AssertionError(f"no row for {case_id}")


@needs_browser
@pytest.mark.parametrize("width, height", [(390, 844), (1280, 900)], ids=["phone", "desktop"])
def test_a_reviewer_reads_a_passed_and_a_failed_case_in_the_browser(page: Path, tmp_path: Path, width: int,
                                                                    height: int) -> None:
    proc = _browser(page, tmp_path, width, height, "--dump-dom")
    assert proc.returncode == 0 and "<body" in proc.stdout, proc.stderr[-2000:]
    dom = proc.stdout
    assert "<dt>Commit</dt><dd>" + SHA in dom and "<dt>Wall time</dt>" in dom and "<dt>Targets</dt><dd>default" in dom
    passed, failed = _case(dom, "capital"), _case(dom, "river")
    for row, question, criteria in ((passed, "What is the capital of France?", "Names Paris as the capital"),
                                    (failed, "Which river flows through Paris?", "Names the Seine")):
        assert '<dt>Input</dt>' in row and f"<pre>{question}</pre>" in row
        assert "<dt>Criteria</dt>" in row and criteria in row
        assert "<dt>Answer</dt>" in row and "<pre>Paris is the capital of France.</pre>" in row
        header = re.search(r'<table class="evaluators"><thead><tr>(.*?)</tr>', row)
        assert header and re.findall(r"<th>(\w+)</th>", header.group(1)) == \
            ["Evaluator", "Type", "Score", "Weight", "Verdict", "Hits", "Misses", "Reasoning"]
    evaluators = re.findall(r'<tr class="evaluator"><td class="name"[^>]*>([^<]*)</td><td>([^<]*)</td>'
                            r'<td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="verdict \w+">(\w+)</td>',
                            failed)
    assert evaluators == [("names-seine", "contains", "0.000", "3", "fail"),
                          ("judge-paris", "code_judge", "1.000", "1", "pass")]
    assert "<dt>Expected output</dt>" in passed and "<dt>Expected output</dt>" not in failed
    assert "<details open=" in failed and "<details open=" not in passed  # what failed is unfolded
    # A long path wraps at its slashes, then at a `.` or `_` inside a name.
    assert f"evals/<wbr>{LONG}/<wbr>geo.<wbr>eval.<wbr>yaml" in dom

    shot = tmp_path / f"report-{width}.png"
    proc = _browser(page, tmp_path, width, height, f"--screenshot={shot}")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    assert png_is_not_blank(shot.read_bytes())
