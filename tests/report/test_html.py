"""report.html: written beside the JUnit file by `run` and `merge`, self-contained, and safe with hostile model text.

The page is checked twice: as text (what was written, where, and that the data block cannot be
broken out of), and in a real browser, Debian's chromium in headless mode: the DOM after the
page's script ran (`--dump-dom`), filters read from the URL hash, 5000 cases drawn a page at a
time, and a screenshot that is not blank. The browser tests skip, saying why, where chromium is
not installed (`apt-get install chromium`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from agentv_gate.report.html import PAGE_ROWS, build_html, write_html
from agentv_gate.report.rows import ReportRow
from tests.helpers.cli import run_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply
from tests.helpers.files import make_repo, write

CHROMIUM = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium) "
                                                            "to load report.html in a real browser")

HOSTILE = "</script><img src=x onerror=\"document.title='pwned'\"><b>bold</b> <!-- \u2028 &amp;"

TARGETS = f"""\
targets:
  - name: default
    provider: mock
    response: Paris is the capital of France.
    responses:
      - id: hostile
        response: {json.dumps(HOSTILE)}
"""

SUITE = """\
tests:
  - id: capital
    input: What is the capital of France?
    assertions: [{type: contains, value: Paris}]
  - id: hostile
    input: Say something nasty.
    assertions: [{type: contains, value: Paris}]
  - id: berlin
    input: What is the capital of Germany?
    assertions: [{type: contains, value: Berlin}]
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run with a passing case, a failing case and a case whose answer is hostile HTML."""
    repo = make_repo(tmp_path_factory.mktemp("html-project") / "repo", TARGETS)
    write(repo / "evals" / "geo.eval.yaml", SUITE)
    proc = run_cli("run", "evals", "--junit", "out/ci/junit.xml", "--results", "out/results.jsonl", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return repo


def row(n: int, verdict: str = "pass", answer: str = "") -> ReportRow:
    return ReportRow(eval_id=f"case-{n:05}", suite="evals/big.eval.yaml", file="evals/big.eval.yaml", line=n + 2,
                     target="default", verdict=verdict, score=1.0 if verdict == "pass" else 0.2, threshold=0.5,
                     duration_ms=12, error="judge exited 1" if verdict == "error" else None,
                     reasoning="because" if verdict != "pass" else None,
                     misses=("missing 'Berlin'",) if verdict == "fail" else (), candidate_answer=answer)


def data_block(page: str) -> str:
    match = re.search(r'<script type="application/json" id="agentv-gate-data">(.*?)</script>', page, re.DOTALL)
    assert match, "no data block"
    return match.group(1)


# ----------------------------------------------------------------------- the file


def test_run_writes_report_html_beside_the_junit_file(project: Path) -> None:
    page = (project / "out" / "ci" / "report.html").read_text(encoding="utf-8")
    assert "agentv-gate FAILED: 3 cases: 1 passed, 2 failed, 0 errors" in page  # readable without JavaScript
    assert not (project / ".agentv-gate" / "report.html").exists()


def test_merge_writes_report_html_beside_its_junit_file(project: Path) -> None:
    proc = run_cli("merge", "out/results.jsonl", "--output-dir", "merged", cwd=project)
    assert proc.returncode == 1, proc.stderr
    page = (project / "merged" / "report.html").read_text(encoding="utf-8")
    assert "agentv-gate FAILED: 3 cases" in page


def test_a_device_as_junit_file_puts_the_page_in_the_output_folder(project: Path) -> None:
    proc = run_cli("run", "evals", "--junit", os.devnull, "--output-dir", "devnull-out", "--quiet", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert (project / "devnull-out" / "report.html").is_file()
    assert not (Path(os.devnull).parent / "report.html").exists()


def test_the_page_fetches_nothing(project: Path) -> None:
    page = (project / "out" / "ci" / "report.html").read_text(encoding="utf-8")
    markup = page.replace(data_block(page), "")  # the data is never markup (next test)
    assert not re.search(r"<(link|img|iframe|object|embed)\b|\b(src|href)\s*=|url\(|@import", markup, re.IGNORECASE)
    assert "default-src 'none'" in page and "unsafe-inline" not in page


def test_hostile_answers_cannot_leave_the_data_block(project: Path) -> None:
    page = (project / "out" / "ci" / "report.html").read_text(encoding="utf-8")
    block = data_block(page)
    assert "<" not in block and ">" not in block and "&" not in block and "\u2028" not in block
    rows = json.loads(block)["rows"]
    hostile = next(r for r in rows if r[1] == "hostile")
    assert hostile[11] == HOSTILE  # the answer, exactly, once parsed
    assert page.count("<script") == 2  # ours: the data block and the script


def test_every_case_is_in_the_page_even_when_thousands(tmp_path: Path) -> None:
    rows = [row(n) for n in range(4990)] + [row(n, "fail", answer="x" * 10_000) for n in range(4990, 5000)]
    path = write_html(rows, tmp_path / "report.html")
    data = json.loads(data_block(path.read_text(encoding="utf-8")))
    assert len(data["rows"]) == 5000 and data["page"] == PAGE_ROWS
    assert [r[0] for r in data["rows"][:10]] == ["fail"] * 10  # what did not pass comes first
    assert "[truncated: 6,000 more characters]" in data["rows"][0][11]  # cut, and said so
    assert path.stat().st_size < 2_000_000


def meta_rows(page: str) -> dict[str, str]:
    return dict(re.findall(r"<dt>([^<]*)</dt><dd>([^<]*)</dd>", page.split('id="run">', 1)[1].split("</dl>", 1)[0]))


def test_the_judge_targets_are_listed_under_targets(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    targets = (f"targets:\n  - name: default\n    provider: mock\n    response: Paris.\n    judge_target: grader\n"
               f"  - name: grader\n    provider: openai\n    base_url: {fake_llm.url}/v1\n    model: fake\n"
               f"    api_key: ${{{{ JUDGE_KEY }}}}\n")
    repo = make_repo(tmp_path / "repo", targets)
    write(repo / "evals" / "judged.eval.yaml", "tests:\n  - id: judged\n    input: Capital of France?\n"
          "    assert: [{type: llm_judge, name: quality, prompt: Is it right?}]\n"
          "  - id: plain\n    input: Capital?\n    assert: [{type: contains, value: Paris}]\n")
    verdict = json.dumps({"score": 1.0, "hits": ["right"], "misses": [], "reasoning": "fine"})
    fake_llm.set_default("/v1/chat/completions", FakeReply.openai(verdict))
    proc = run_cli("run", "evals", "--junit", "out/junit.xml", cwd=repo, env={"JUDGE_KEY": "sk-test"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = meta_rows((repo / "out" / "report.html").read_text(encoding="utf-8"))
    assert rows["Targets"] == "default" and rows["Judge targets"] == "grader"
    keys = list(rows)
    assert keys.index("Judge targets") == keys.index("Targets") + 1


def test_a_run_without_llm_judges_says_so_under_targets(project: Path) -> None:
    rows = meta_rows((project / "out" / "ci" / "report.html").read_text(encoding="utf-8"))
    assert rows["Targets"] == "default" and rows["Judge targets"] == "none (no LLM judge ran)"


# ----------------------------------------------------------------------- in a real browser


def chromium(url: str, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-extensions", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                           "--window-size=1280,900", *flags, url],
                          capture_output=True, text=True, timeout=180)


def dom(page: Path, tmp_path: Path, fragment: str = "") -> str:
    proc = chromium(page.resolve().as_uri() + fragment, tmp_path, "--dump-dom")
    assert proc.returncode == 0 and "<body" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def case_rows(dom_text: str) -> list[tuple[str, str]]:
    """(verdict, case id) of every case row the script drew."""
    return re.findall(r'<tr class="case \w+" data-verdict="(\w+)"><td[^>]*>\w+</td><td class="id">([^<]*)</td>',
                      dom_text)


@needs_browser
def test_browser_draws_the_cases_and_shows_hostile_text_as_text(project: Path, tmp_path: Path) -> None:
    text = dom(project / "out" / "ci" / "report.html", tmp_path)
    assert case_rows(text) == [("fail", "hostile"), ("fail", "berlin"), ("pass", "capital")]  # by file line
    assert "&lt;/script&gt;&lt;img src=x onerror=" in text  # shown, not run
    assert "<img" not in text and "<b>bold" not in text
    assert re.search(r"<title>agentv-gate FAILED: 3 cases</title>", text)
    assert "Showing 3 of 3 matching cases (3 in all)" in text


@needs_browser
def test_browser_filters_from_the_url_hash(project: Path, tmp_path: Path) -> None:
    page = project / "out" / "ci" / "report.html"
    assert case_rows(dom(page, tmp_path, "#verdict=pass")) == [("pass", "capital")]
    assert case_rows(dom(page, tmp_path, "#verdict=not-passed&q=BERLIN")) == [("fail", "berlin")]
    assert case_rows(dom(page, tmp_path, "#q=onerror")) == [("fail", "hostile")]  # the answer is searched too


@needs_browser
def test_browser_draws_5000_cases_a_page_at_a_time(tmp_path: Path) -> None:
    rows = [row(n) for n in range(4990)] + [row(n, "fail") for n in range(4990, 5000)]
    page = write_html(rows, tmp_path / "report.html")
    drawn = case_rows(dom(page, tmp_path))
    assert len(drawn) == PAGE_ROWS and drawn[0] == ("fail", "case-04990")
    text = dom(page, tmp_path, "#q=case-00007")  # the filter searches every case, not just the drawn ones
    assert case_rows(text) == [("pass", "case-00007")]
    assert "Showing 1 of 1 matching case (5000 in all)" in text


def png_is_not_blank(png: bytes) -> bool:
    """Decode the PNG's pixel data (zlib over the IDAT chunks) and look for more than a few distinct bytes."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"IDAT":
            idat += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(idat))) > 16


@needs_browser
def test_browser_screenshot_is_not_blank(project: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    proc = chromium((project / "out" / "ci" / "report.html").resolve().as_uri(), tmp_path, f"--screenshot={shot}")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    assert png_is_not_blank(shot.read_bytes())


def test_build_html_of_an_empty_run() -> None:
    page = build_html([])
    assert "agentv-gate FAILED: 0 cases" in page and json.loads(data_block(page))["rows"] == []


TOKEN = "refund" * 50  # 300 characters, no space to break at
URL = "https://support.example.com/policies/refunds-and-returns/" + "international-orders-" * 8 + "faq.html"
WIDE_SUITE_PATH = "evals/customer_support/very_long_suite_name_for_refunds_and_returns_policy.eval.yaml"


def wide_suite() -> str:
    """Long case ids, and many evaluators with long names, each missing a long unbroken value."""
    cases = []
    for n in range(2):
        checks = "".join(f"      - {{name: {'checks_the_answer_names_the_refund_window_' * 2}{k}, type: contains,"
                         f" value: {TOKEN}{k}}}\n" for k in range(6))
        cases.append(f"  - id: refund-request-for-an-international-order-placed-more-than-thirty-days-ago-{n}\n"
                     f"    input: Can I return {URL}?\n    assertions:\n{checks}")
    return "tests:\n" + "".join(cases)


@pytest.fixture(scope="module")
def wide_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run as a support team writes one: nested long file names, long ids, answers with no spaces."""
    targets = f"targets:\n  - name: default\n    provider: mock\n    response: {json.dumps(TOKEN + ' see ' + URL)}\n"
    repo = make_repo(tmp_path_factory.mktemp("html-wide") / "repo", targets)
    write(repo / WIDE_SUITE_PATH, wide_suite())
    proc = run_cli("run", "evals", "--junit", "out/ci/junit.xml", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return repo / "out" / "ci" / "report.html"


@needs_browser
def test_browser_at_1280_px_does_not_scroll_sideways(wide_page: Path, tmp_path: Path) -> None:
    """The page at 1280 px (the window `chromium` opens) fits its width: no sideways scroll, even with
    long unbroken file names, ids, answers and a wide evaluators table (failed cases open their details)."""
    page = wide_page.read_text(encoding="utf-8")
    probe = ("<script>function probe() { var d = document.documentElement;"
             " document.body.setAttribute('data-probe', d.scrollWidth + 'x' + d.clientWidth); }"
             " probe(); window.addEventListener('load', probe);</script></body>")
    copy = tmp_path / "probe.html"
    # The page's CSP allows only its own script: the probe's copy drops it (the layout is the same).
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    head, tail = page.rsplit("</body>", 1)
    copy.write_text(head + probe + tail, encoding="utf-8")
    proc = chromium(copy.resolve().as_uri(), tmp_path, "--virtual-time-budget=3000", "--dump-dom")
    found = re.search(r'data-probe="(\d+)x(\d+)"', proc.stdout)
    assert found, proc.stderr[-2000:]
    scroll, client = map(int, found.groups())
    assert client > 1000 and scroll <= client, (scroll, client)
