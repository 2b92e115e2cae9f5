"""Results JSONL: rows on disk as each case finishes, read back across shards, clear errors on bad disks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from functools import partial
from pathlib import Path

import pytest

from agentv_gate.errors import ReportWriteError, ResultsReadError
from agentv_gate.models import EvaluatorResult
from agentv_gate.report.jsonl import JsonlWriter, describe_os_error, read_results
from tests.helpers.reports import case_result

case = partial(case_result, score=0.5, threshold=0.5)  # a pass at the threshold, so merge keeps verdicts as written


INT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)()
"""The longest integer Python reads from text (3.11+, and 3.10.7+), 0 when unlimited."""


def lines_on_disk(path: Path) -> list[dict[str, object]]:
    """Read through a separate file handle, as another process would."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh.read().splitlines()]


def test_each_row_is_on_disk_as_soon_as_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "results.jsonl"  # two folders to create
    with JsonlWriter(path) as writer:
        assert path.exists() and lines_on_disk(path) == []
        writer.write(case("first", reasoning="r1"))
        assert [row["eval_id"] for row in lines_on_disk(path)] == ["first"]
        writer.write(case("second", "fail", misses=["m"]))
        rows = lines_on_disk(path)
        assert [row["eval_id"] for row in rows] == ["first", "second"]
        assert rows[1]["misses"] == ["m"] and rows[1]["verdict"] == "fail"
    assert writer.rows_written == 2


def test_a_killed_run_keeps_every_finished_row(tmp_path: Path) -> None:
    """A real child process writes two rows and is killed before it can close or exit cleanly."""
    path = tmp_path / "results.jsonl"
    script = textwrap.dedent(f"""
        import sys, time
        from agentv_gate.models import CaseResult
        from agentv_gate.report.jsonl import JsonlWriter
        w = JsonlWriter({str(path)!r})
        for i in range(2):
            w.write(CaseResult(eval_id=f"c{{i}}", suite="s.yaml", file="s.yaml", line=i + 1, verdict="pass"))
        print("written", flush=True)
        time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2])
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "written"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    results, problems = read_results([path])
    assert [r.eval_id for r in results] == ["c0", "c1"] and problems == []


def test_shards_read_back_in_order_and_unchanged(tmp_path: Path) -> None:
    nested = [EvaluatorResult(name="kw", type="code_judge", score=0.2, misses=["x"],
                              evaluator_results=[EvaluatorResult(name="inner", type="contains", score=0.0)])]
    shard1 = [case("a", "fail", score=0.2, evaluator_results=nested, shard="1/2"), case("b", shard="1/2")]
    shard2 = [case("c", "error", error="judge crashed", shard="2/2")]
    for name, rows in (("s1.jsonl", shard1), ("s2.jsonl", shard2)):
        with JsonlWriter(tmp_path / name) as writer:
            for r in rows:
                writer.write(r)
    results, problems = read_results([tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"])
    assert problems == []
    assert [r.model_dump() for r in results] == [r.model_dump() for r in shard1 + shard2]


def test_truncated_last_line_is_reported_and_the_rest_kept(tmp_path: Path) -> None:
    """Blank lines before the cut line are skipped; the cut line is the last, with no newline (a
    writer writes each row with its newline at once). Ended by a newline, it is damage: refused."""
    path = tmp_path / "results.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(case("a"))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps(case("b").to_json_row()) + '\n{"eval_id": "c')
    results, problems = read_results([path])
    assert [r.eval_id for r in results] == ["a", "b"]
    assert problems == [f"{path}:4: skipped a truncated last line "
                        "(14 characters, unterminated string starting at); the rest was read"]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n\n")
    with pytest.raises(ResultsReadError, match=r"results\.jsonl:4: not a JSON results row \(Invalid control"):
        read_results([path])


@pytest.mark.parametrize(("bad", "reason"), [
    ('{"eval_id": ', "Expecting value"),
    ("[" * 100_000, "nested too deeply"),
    pytest.param('{"line": ' + "1" * 5000 + "}", f"Exceeds the limit ({INT_DIGITS} digits) for integer string "
                 "conversion: value has 5000 digits", marks=pytest.mark.skipif(
                     not 0 < INT_DIGITS < 5000, reason="this Python reads integers of any length")),
])
def test_a_bad_line_in_the_middle_is_an_error_not_a_silent_drop(tmp_path: Path, bad: str, reason: str) -> None:
    path = tmp_path / "results.jsonl"
    good = json.dumps(case("a").to_json_row())
    path.write_text(f"{good}\n{bad}\n{good}\n", encoding="utf-8")
    with pytest.raises(ResultsReadError) as info:
        read_results([path])
    assert str(info.value) == f"{path}:2: not a JSON results row ({reason})"


def test_a_row_that_is_not_a_case_result_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"file": "f", "line": 1}\n', encoding="utf-8")  # no eval_id, no suite: the first is named
    with pytest.raises(ResultsReadError, match=r"jsonl:1: not a case result: eval_id: Field required$"):
        read_results([path])


def test_missing_results_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ResultsReadError, match=r"cannot read results from .*nope\.jsonl: No such file"):
        read_results([tmp_path / "nope.jsonl"])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_disk_full_is_a_clear_error() -> None:
    """Also on close: the row that did not fit is still buffered, and fails again when flushed."""
    writer = JsonlWriter("/dev/full")
    for step in (partial(writer.write, case("a")), writer.close):
        with pytest.raises(ReportWriteError) as info:
            step()
        assert str(info.value) == "cannot write results to /dev/full: No space left on device"


def test_unusable_path_fails_at_start_with_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ReportWriteError, match=r"^cannot write results to .*file/r\.jsonl: Not a directory$"):
        JsonlWriter(blocker / "r.jsonl")


def test_writing_after_close_is_refused(tmp_path: Path) -> None:
    writer = JsonlWriter(tmp_path / "r.jsonl")
    writer.close()
    writer.close()
    with pytest.raises(ReportWriteError, match="already closed"):
        writer.write(case("late"))


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = JsonlWriter(path)

    def work(n: int) -> None:
        for i in range(50):
            writer.write(case(f"t{n}-{i}", candidate_answer="y" * (i * 97)))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    results, problems = read_results([path])
    assert problems == [] and len(results) == 400
    assert {r.eval_id for r in results} == {f"t{n}-{i}" for n in range(8) for i in range(50)}


def test_nan_and_infinity_are_written_as_null_so_the_row_stays_json(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(case("é", score=float("inf"), hits=["h"], scores=[{"name": "j", "score": float("nan"), "weight": 1.0}],
                          token_usage={"input": 3, "cost": float("-inf")}))
        writer.write(case("next"))
    text = path.read_text("utf-8")
    assert '"é"' in text  # non-ASCII kept readable here too
    first, second = (json.loads(line, parse_constant=pytest.fail) for line in text.splitlines())
    assert (first["eval_id"], first["score"], first["threshold"], first["hits"]) == ("é", None, 0.5, ["h"])
    assert first["scores"] == [{"name": "j", "score": None, "weight": 1.0}]
    assert first["token_usage"] == {"input": 3, "cost": None} and second["eval_id"] == "next"


def test_os_errors_are_described_by_their_reason() -> None:
    assert describe_os_error(OSError(28, "No space left on device", "/x")) == "No space left on device"
    assert describe_os_error(OSError("the disk went away")) == "the disk went away"
    assert describe_os_error(OSError()) == "OSError"


def test_unicode_stays_readable_and_lone_surrogates_stay_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(case("é-✓", candidate_answer="naïve \ud800 end"))
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # strict decoding: the file is valid UTF-8
    assert "é-✓" in text and "naïve" in text and "\\ud800" in text
    (result,), _ = read_results([path])
    assert result.candidate_answer == "naïve \ud800 end"
