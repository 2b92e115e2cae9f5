"""Fixtures shared by the whole suite; the plain helpers they build on live in tests/helpers/.

* `repo`: a fresh repository (`tmp_path/repo`, see `tests.helpers.files.make_repo`), with
  `tmp_path` itself left as "outside the repository".
* `fake_llm`: a started `FakeLLMServer` on 127.0.0.1, closed after the test.
* `tty`: a real pseudo-terminal, (writer, master): a reporter sees isatty() true on the writer;
  `tests.helpers.terminal.read_pty(master)` reads what it drew.

Helpers used as plain functions (also from module-scoped fixtures and other helpers):
`tests.helpers.files.write` and `make_repo`, `tests.helpers.cli.run_cli` and `start_cli`.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

# Before anything imports agentv_gate, and inherited by every CLI the tests start: the loader reads each
# test only through the keys its tables declare, and a read of any other key fails the test (AssertionError).
os.environ["AGENTV_GATE_SELF_CHECK"] = "1"

import pytest
from hypothesis import settings

from tests.helpers.fake_llm_server import FakeLLMServer
from tests.helpers.files import make_repo
from tests.helpers.rewrite_cache import prewrite_for_workers
from tests.helpers.shim_path import interpreter_first

# `python3` started directly rather than through a version manager's shim (helpers/shim_path.py): the
# same interpreter, without 80 ms of shell scripts each time; inherited by the workers and every child.
os.environ["PATH"] = interpreter_first(os.environ.get("PATH", ""))

# The property tests draw the same examples on every run and every machine (derandomize): a CI failure
# reproduces locally, and a run's cost is fixed. HYPOTHESIS_PROFILE=explore draws new ones, to look further.
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


LONGEST_FILES = [
    "tests/packaging/test_doc_commands.py", "tests/compat/test_agentv_442_side_by_side.py",
    "tests/packaging/test_precommit.py", "tests/compat/test_agentv_442_replay.py",
    "tests/packaging/test_user_environment.py", "tests/packaging/test_team_first_day.py",
    "tests/packaging/test_action.py", "tests/hardening/test_hardening_properties.py", "tests/packaging/test_dist.py",
    "tests/commands/test_live_cli.py", "tests/packaging/test_act_comment.py", "tests/packaging/test_act.py",
    "tests/commands/test_paired_cli.py", "tests/packaging/test_action_token.py", "tests/packaging/test_act_replay.py",
    "tests/commands/test_workspace_file_changes_cli.py", "tests/test_warm_cli.py", "tests/compat/test_agentv_examples.py",
    "tests/commands/test_verdict_properties.py", "tests/commands/test_case_guard_cli.py",
    "tests/commands/test_agent_cli_combinations_cli.py", "tests/commands/test_grader_workspace_combinations_cli.py",
    "tests/commands/test_selection_combinations_cli.py",
]
"""The files whose tests take longest together (a whole run's `--durations`), longest first."""


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist would hand out the files by their number of tests, most first: a file of three long tests
    # (the docs' commands, the AgentV replays) then started last and kept one worker busy alone at the end.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    # Each worker would rewrite every test module's asserts itself (helpers/rewrite_cache.py): done once here.
    prewrite_for_workers(config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files in the order `--dist loadfile` hands them to the workers: the longest first, so the four
    finish together; then the others, most tests first, as pytest-xdist orders them."""
    files = [item.nodeid.split("::")[0] for item in items]
    counts = {name: files.count(name) for name in set(files)}
    rank = {name: place for place, name in enumerate(LONGEST_FILES)}
    order = {id(item): (rank.get(name, len(rank)), -counts[name], name) for item, name in zip(items, files, strict=True)}
    items.sort(key=lambda item: order[id(item)])


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture()
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture()
def tty() -> Iterator[tuple[io.TextIOWrapper, int]]:
    master, slave = os.openpty()
    writer = open(slave, "w", encoding="utf-8", closefd=True)
    try:
        yield writer, master
    finally:
        writer.close()
        os.close(master)
