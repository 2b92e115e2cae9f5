"""`make mutate` stays runnable: its module -> tests map and its list of equivalent mutants match the code.

The mutation run itself takes minutes per module (see tests/README.md), so it is not part of the
suite; these checks are what would quietly rot without it: a renamed test file, a moved module, an
equivalent-mutant entry whose line no longer exists.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_mutation", REPO / "mutation" / "run_mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_mutation", module)
    spec.loader.exec_module(module)
    return module


def test_every_mapped_module_and_test_path_exists() -> None:
    mapping = tool().MODULES
    assert mapping
    for module, tests in mapping.items():
        assert (REPO / module).is_file(), module
        assert tests, module
        for test in tests:
            assert (REPO / test).exists(), f"{module}: {test}"


def test_every_equivalent_mutant_names_a_mapped_module_and_a_line_it_still_has() -> None:
    run_mutation = tool()
    entries = run_mutation.load_equivalents()
    for entry in entries:
        assert entry.module in run_mutation.MODULES, entry.module
        source = [line.strip() for line in (REPO / entry.module).read_text(encoding="utf-8").splitlines()]
        assert entry.original in source, f"{entry.module}: line gone, drop or update the entry: {entry.original}"
        assert entry.original != entry.mutated and entry.why


def test_annotations_are_found_only_where_they_are_never_evaluated() -> None:
    spans = tool().annotation_spans
    postponed = "from __future__ import annotations\n\ndef f(x: int | None) -> str | None:\n    return None\n"
    assert spans(postponed) == [((3, 9), (3, 19)), ((3, 24), (3, 34))]
    assert spans("def f(x: int | None) -> None:\n    return None\n") == []


def test_recheck_forgets_only_the_survivors(tmp_path: Path) -> None:
    import sqlite3

    session = tmp_path / "session.sqlite"
    with sqlite3.connect(session) as db:
        db.execute("CREATE TABLE work_results (worker_outcome VARCHAR(9), output TEXT, test_outcome VARCHAR(11), "
                   "diff TEXT, job_id VARCHAR NOT NULL PRIMARY KEY)")
        db.executemany("INSERT INTO work_results VALUES (?, '', ?, '', ?)", [
            ("NORMAL", "SURVIVED", "a"), ("NORMAL", "KILLED", "b"), ("SKIPPED", None, "c"), ("NORMAL", "SURVIVED", "d")])
    assert tool().survivors_pending(session) == 2
    with sqlite3.connect(session) as db:
        assert sorted(row[0] for row in db.execute("SELECT job_id FROM work_results")) == ["b", "c"]


def test_a_mutant_that_does_not_parse_is_not_counted_as_killed() -> None:
    not_python = tool()._not_python
    broken = ('E   File "/x/.mutation/transport.http/src/agentv_gate/transport/http_policy.py", line 254\n'
              "E       -,\nE   SyntaxError: invalid syntax")
    assert not_python(broken, "agentv_gate/transport/http_policy.py")
    # a test that fails on a SyntaxError elsewhere (the agent's output, a fixture) is a real kill
    assert not not_python("SyntaxError in judge.py", "agentv_gate/transport/http_policy.py")
    assert not not_python("AssertionError: 0.5 != 1.0", "agentv_gate/transport/http_policy.py")


def test_a_sample_is_the_same_mutants_every_time_and_about_its_share() -> None:
    in_sample = tool().in_sample
    ids = [f"{n:032x}" for n in range(2000)]
    chosen = [job for job in ids if in_sample(job, 0.3)]
    assert chosen == [job for job in ids if in_sample(job, 0.3)]
    assert 500 < len(chosen) < 700
    assert all(in_sample(job, 1.0) for job in ids)


def test_a_mutant_is_sampled_by_what_it_changes_not_by_its_random_job_id() -> None:
    """cosmic-ray gives each mutant a new random job id at every `init`: the sample is keyed on the
    operator and its occurrence, so a second run of an unchanged module samples the same mutants."""
    from types import SimpleNamespace

    key = tool().mutant_key
    first = SimpleNamespace(job_id="eebbaa27668645128ee1e5fb4385b50c", operator_name="core/AddNot", occurrence=7)
    again = SimpleNamespace(job_id="9fd614aff7b34e8e952e769d0bc69d47", operator_name="core/AddNot", occurrence=7)
    assert key(first) == key(again) != key(SimpleNamespace(job_id="x", operator_name="core/AddNot", occurrence=8))


def test_the_modules_added_since_the_first_list_are_mutated() -> None:
    """The modules added since the list was first made, each with tests of its own."""
    mapping = tool().MODULES
    for module in ("execution/stop.py", "base/trial_strategies.py", "judging/rubric_protocol.py", "report/html.py",
                   "report/live.py", "report/baseline/compare.py", "execution/hooks.py", "evaluators/custom_assertion.py",
                   "evaluators/target_proxy.py", "redaction.py", "loader/assertions.py"):
        assert f"agentv_gate/{module}" in mapping, module


def slip_operators() -> ModuleType:
    pytest.importorskip("cosmic_ray", reason="cosmic-ray is the `mutate` extra: make mutate installs it")
    spec = importlib.util.spec_from_file_location("slip_operators", REPO / "mutation" / "slip_operators.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["SwapMinMax", "FirstLast", "HeadTail"])
def test_each_slip_operator_makes_the_mutants_its_examples_show(name: str) -> None:
    from cosmic_ray.mutating import mutate_code

    operator = getattr(slip_operators(), name)
    for example in operator.examples():
        assert mutate_code(example.pre_mutation_code, operator(), example.occurrence) == example.post_mutation_code


@pytest.mark.parametrize(("name", "code"), [
    ("SwapMinMax", "x = obj.max(a)\n"),      # a method, not the builtin
    ("SwapMinMax", "def max(a):\n    return a\n"),
    ("FirstLast", "y = x[1]\n"),
    ("FirstLast", "y = x[0:2]\n"),
    ("HeadTail", "y = x[1:2]\n"),
    ("HeadTail", "y = x[::2]\n"),
    ("HeadTail", "y = x[0]\n"),
])
def test_slip_operators_leave_code_that_is_not_their_slip_alone(name: str, code: str) -> None:
    from cosmic_ray.mutating import mutate_code

    assert mutate_code(code, getattr(slip_operators(), name)(), 0) is None


def test_a_long_output_s_tail_is_a_mutant_and_comments_survive_it() -> None:
    from cosmic_ray.mutating import mutate_code

    code = "out = '…' + out[-LIMIT:]  # the end\nbest = max(scores)  # the best\n"
    operators = slip_operators()
    assert mutate_code(code, operators.HeadTail(), 0) == "out = '…' + out[:LIMIT]  # the end\nbest = max(scores)  # the best\n"
    assert mutate_code(code, operators.SwapMinMax(), 0) == "out = '…' + out[-LIMIT:]  # the end\nbest = min(scores)  # the best\n"


def test_the_slip_operators_are_found_by_cosmic_ray_from_the_plugin_folder(tmp_path: Path) -> None:
    import subprocess

    slip_operators()
    plugin = tool().install_slip_operators(tmp_path / "plugin")
    listed = subprocess.run([sys.executable, "-c", "import cosmic_ray.plugins as p; print(p.operator_names())"],
                            env={"PYTHONPATH": str(plugin), "HOME": str(tmp_path)}, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    for name in ("slips/SwapMinMax", "slips/FirstLast", "slips/HeadTail", "core/ReplaceComparisonOperator_Gt_GtE",
                 "core/ReplaceComparisonOperator_Lt_LtE"):
        assert name in listed.stdout


def slips_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_slips", REPO / "mutation" / "run_slips.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_slips", module)  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_every_hand_planted_slip_still_applies_and_names_tests_that_exist() -> None:
    """`mutation/run_slips.py` re-runs the slips; one the code moved away from would drop out of the figure."""
    import subprocess

    slips = slips_tool().all_slips()
    assert len(slips) >= 40
    for slip in slips:
        assert slip.tests and all((REPO / test).is_file() for test in slip.tests), slip.name
        checked = subprocess.run(["git", "apply", "--check", str(slip.path)], cwd=REPO, capture_output=True, text=True)
        assert checked.returncode == 0, f"{slip.name}: {checked.stderr}"


def test_a_slip_header_without_its_tests_is_refused(tmp_path: Path) -> None:
    patch = tmp_path / "01-x.patch"
    patch.write_text("Slip: something\nArea: somewhere\ndiff --git a/x b/x\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="the header needs Tests lines"):
        slips_tool().read_slip(patch)
    patch.write_text("Slip: s\nArea: a\nTests: tests/a.py tests/b.py\nEquivalent: why\n--- a/x\n", encoding="utf-8")
    read = slips_tool().read_slip(patch)
    assert (read.summary, read.area, read.tests, read.equivalent) == ("s", "a", ("tests/a.py", "tests/b.py"), "why")


def test_recheck_leaves_a_listed_equivalent_survivor_alone(tmp_path: Path) -> None:
    import sqlite3

    run_mutation = tool()
    session = tmp_path / "session.sqlite"
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    with sqlite3.connect(session) as db:
        db.execute("CREATE TABLE work_results (worker_outcome VARCHAR(9), output TEXT, test_outcome VARCHAR(11), "
                   "diff TEXT, job_id VARCHAR NOT NULL PRIMARY KEY)")
        db.executemany("INSERT INTO work_results VALUES ('NORMAL', '', 'SURVIVED', ?, ?)",
                       [(diff, "listed"), (diff.replace("x = 2", "x = 3"), "not-listed")])
    listed = [run_mutation.Equivalent("m.py", "x = 1", "x = 2", "why")]
    assert run_mutation.survivors_pending(session, listed, "m.py") == 1
    with sqlite3.connect(session) as db:
        assert sorted(row[0] for row in db.execute("SELECT job_id FROM work_results")) == ["listed"]
