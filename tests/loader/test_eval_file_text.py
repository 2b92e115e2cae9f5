"""An eval file's bytes become text as Python's text mode reads them: a UTF-8 byte order mark dropped,
Windows (`\\r\\n`) and old Mac (`\\r`) line ends read as `\\n`. A byte that is not UTF-8 is reported at
its own line and its offset in the file, however far into the file it is."""

from __future__ import annotations

import codecs
from pathlib import Path

from agentv_gate.loader import load_eval_file
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo

SUITE = "tests:\n  - id: one\n    input: |\n      first\n      second\n    assertions:\n      - {type: contains, value: x}\n"


def test_a_byte_order_mark_and_any_line_ends_read_as_plain_text(tmp_path: Path) -> None:
    for name, data in {"lf": SUITE.encode(), "bom-crlf": codecs.BOM_UTF8 + SUITE.replace("\n", "\r\n").encode(),
                       "cr": SUITE.replace("\n", "\r").encode()}.items():
        (tmp_path / f"{name}.eval.yaml").write_bytes(data)
        result = load_eval_file(tmp_path / f"{name}.eval.yaml", repo_root=tmp_path)
        assert not result.errors, (name, result.errors)
        [case] = result.cases
        assert (case.input_messages[0].content, case.source_line) == ("first\nsecond\n", 2), name


def test_a_byte_that_is_not_utf8_is_reported_at_its_line_however_far_in(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    filler = "".join(f"  - id: case-{i}\n    input: Say {i}\n    assertions: [{{type: contains, value: '{i}'}}]\n"
                     for i in range(2000))  # past any chunk a reader decodes at a time
    data = codecs.BOM_UTF8 + ("tests:\n" + filler).encode() + b"  - id: caf\xe9\n    input: hi\n"
    (repo / "evals" / "latin.eval.yaml").write_bytes(data)
    ran = run_cli("validate", "evals/latin.eval.yaml", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    line, offset = 1 + filler.count("\n") + 1, data.index(b"\xe9")
    assert f"evals/latin.eval.yaml:{line}: not UTF-8 text (invalid continuation byte at byte {offset})" in ran.stdout, \
        ran.stdout


def test_a_utf16_file_is_refused_as_agentv_reads_it_as_utf8(tmp_path: Path) -> None:
    """libyaml would read UTF-16 by its byte order mark; AgentV reads every eval file as UTF-8."""
    (tmp_path / "s.eval.yaml").write_bytes(codecs.BOM_UTF16_LE + SUITE.encode("utf-16-le"))
    result = load_eval_file(tmp_path / "s.eval.yaml", repo_root=tmp_path)
    assert not result.cases
    assert [(e.line, e.message) for e in result.errors] == [
        (1, "not UTF-8 text (it starts with a UTF-16 byte order mark)")]


def test_a_surrogate_and_a_control_character_are_refused_at_their_line(tmp_path: Path) -> None:
    (tmp_path / "s.eval.yaml").write_bytes(SUITE.encode() + b"  - id: two\n    input: \xed\xa0\x80\n")
    result = load_eval_file(tmp_path / "s.eval.yaml", repo_root=tmp_path)
    assert [(e.line, e.message.split(" (")[0]) for e in result.errors] == [(9, "not UTF-8 text")]
    (tmp_path / "s.eval.yaml").write_bytes(SUITE.encode() + b"  - id: two\n    input: a\x01b\n")
    result = load_eval_file(tmp_path / "s.eval.yaml", repo_root=tmp_path)
    assert [e.message.split(":")[0] for e in result.errors] == ["malformed YAML"]
