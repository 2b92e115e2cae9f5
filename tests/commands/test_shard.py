"""`--shard K/N`: every case runs in exactly one shard, the same one on every machine.

A CI matrix runs N copies of the same command with different K; if the split depended on
anything but the cases themselves (file order on the command line, dict order, the machine),
some case would run twice and another never, and the merged gate would pass without it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_gate.cli import main
from agentv_gate.errors import EXIT_OK, EXIT_USAGE
from agentv_gate.loader import plan_paths
from agentv_gate.loader.dependencies import Dependent
from agentv_gate.models import EvalCase
from agentv_gate.orchestrator import ShardSpec, select_shard
from tests.helpers.files import make_repo

TARGETS = """\
targets:
  - name: default
    provider: mock
    response: "Paris"
"""


def make_case(suite: str, case_id: str) -> EvalCase:
    return EvalCase(id=case_id, suite=suite, source_file=Path(suite), question=f"{suite}:{case_id}")


def keys(cases: Sequence[Dependent]) -> list[tuple[str, str]]:
    return [(c.suite, c.id) for c in cases]


def split(cases: list[Dependent], count: int) -> list[list[tuple[str, str]]]:
    return [keys(select_shard(cases, ShardSpec(k, count))) for k in range(1, count + 1)]


case_sets = st.lists(
    st.tuples(st.sampled_from(["evals/a.eval.yaml", "evals/b.eval.yaml", "z/c.yaml", "A.yaml"]),
              st.text(alphabet="abcXYZ019-_ é", min_size=1, max_size=6)),
    unique=True, max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(pairs=case_sets, count=st.integers(min_value=1, max_value=9), seed=st.integers(0, 2**16))
def test_shards_partition_every_case_set(pairs: list[tuple[str, str]], count: int, seed: int) -> None:
    cases = [make_case(s, i) for s, i in pairs]
    shards = split(cases, count)

    flat = [key for shard in shards for key in shard]
    assert sorted(flat) == sorted(pairs), "the union of the shards is the whole set"
    assert len(flat) == len(set(flat)), "no case is in two shards"
    sizes = [len(shard) for shard in shards]
    assert max(sizes) - min(sizes) <= 1, sizes

    shuffled = list(cases)
    random.Random(seed).shuffle(shuffled)
    assert split(shuffled, count) == shards, "the split does not depend on the order cases arrive in"
    assert split(cases, count) == shards, "and is the same on every call"


def test_one_shard_is_everything_and_more_shards_than_cases_leaves_some_empty() -> None:
    cases = [make_case("s.yaml", name) for name in ("b", "a", "c")]
    assert keys(select_shard(cases, ShardSpec.parse("1/1"))) == [("s.yaml", "a"), ("s.yaml", "b"), ("s.yaml", "c")]
    shards = split(cases, 5)
    assert [len(s) for s in shards] == [1, 1, 1, 0, 0]


@pytest.mark.parametrize("text, expected", [("1/1", (1, 1)), ("3/4", (3, 4)), ("10/10", (10, 10))])
def test_shard_spec_parses_k_of_n(text: str, expected: tuple[int, int]) -> None:
    spec = ShardSpec.parse(text)
    assert (spec.index, spec.count) == expected
    assert spec.label == text


def write_suites(root: Path) -> list[Path]:
    make_repo(root, TARGETS)
    files = []
    for name, ids in (("alpha", "qwertyu"), ("beta", "asdfg"), ("gamma", "zxcvbnm")):
        path = root / "evals" / f"{name}.eval.yaml"
        body = "".join(f"  - id: {name}-{c}\n    input: q {c}\n    assertions:\n      - type: contains\n"
                       f"        value: Paris\n" for c in ids)
        path.write_text("tests:\n" + body)
        files.append(path)
    return files


def test_assignment_from_real_files_ignores_command_line_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = write_suites(tmp_path)
    monkeypatch.chdir(tmp_path)
    relative = [f.relative_to(tmp_path) for f in files]
    orders = [files, list(reversed(files)), [relative[1], files[2], relative[0]], [tmp_path / "evals"]]
    splits = []
    for order in orders:
        plan = plan_paths(list(order))  # what `run --shard` deals out: the plan's case refs
        assert not plan.errors
        splits.append(split(list(plan.refs), 4))
    assert all(s == splits[0] for s in splits[1:])
    assert sum(len(s) for s in splits[0]) == 19


@pytest.mark.parametrize("bad", ["0/3", "4/3", "3", "a/b", "1/0", "-1/3", "1/3/5", "", "1.5/3", "/3", "2/"])
def test_bad_shard_values_exit_2_before_anything_runs(bad: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    write_suites(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "evals", "--shard", bad, "--output-dir", "out", "--quiet"])
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--shard" in err
    assert not (tmp_path / "out" / "results.jsonl").exists(), "nothing ran"


def test_an_empty_shard_passes_with_empty_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """3 machines, 2 cases: the third job has nothing to do, and that is not a failure of the gate."""
    make_repo(tmp_path, TARGETS)
    (tmp_path / "two.eval.yaml").write_text(
        "tests:\n  - id: a\n    input: q\n    assertions: [{type: contains, value: Paris}]\n"
        "  - id: b\n    input: q\n    assertions: [{type: contains, value: Paris}]\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "two.eval.yaml", "--shard", "3/3", "--output-dir", "out", "--quiet"]) == EXIT_OK
    assert "shard 3/3 has no cases" in capsys.readouterr().err
    assert (tmp_path / "out" / "results.jsonl").read_text() == ""
    assert 'tests="0"' in (tmp_path / "out" / "junit.xml").read_text()
