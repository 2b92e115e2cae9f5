"""A JSONL case with a key written twice is refused at its line, as YAML refuses it.

`{"id": "a", "assertions": [...], "assertions": []}` would run with the first list dropped
(the last key wins in JSON): a case whose checks vanished, passing on nothing. The YAML loader
refuses the same case; the JSONL loader says so at `file:line` too, and the other lines still load.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.hostile import no_traceback

CHECK = '[{"type": "contains", "value": "nowhere"}]'


def test_a_duplicate_key_in_a_jsonl_case_is_refused_at_its_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    good = json.dumps({"id": "fine", "input": "hi", "assertions": [{"type": "contains", "value": "ok"}]})
    write(repo / "evals/set.jsonl", good + "\n"
          + f'{{"id": "twice", "input": "hi", "assertions": {CHECK}, "assertions": []}}\n'
          + '{"id": "nested", "input": [{"role": "user", "content": "a", "content": "b"}], '
            '"assertions": [{"type": "contains", "value": "ok"}]}\n')
    for command in ("validate", "run"):
        proc = run_cli(command, "evals", cwd=repo)
        said = proc.stdout + proc.stderr
        assert proc.returncode in (1, 2) and no_traceback(said), said
        assert "set.jsonl:2:" in said and "duplicate key 'assertions'" in said, said
        assert "set.jsonl:3:" in said and "duplicate key 'content'" in said, said
        assert "set.jsonl:1:" not in said


def test_distinct_keys_load(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/set.jsonl", '{"id": "fine", "input": "hi", "assertions": [{"type": "contains", "value": "ok"}]}\n')
    proc = run_cli("run", "evals", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
