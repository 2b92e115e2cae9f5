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
