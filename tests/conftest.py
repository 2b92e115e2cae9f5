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

# The property tests draw the same examples on every run and every machine (derandomize): a CI failure
# reproduces locally, and a run's cost is fixed. HYPOTHESIS_PROFILE=explore draws new ones, to look further.
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


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
