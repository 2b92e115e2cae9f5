"""The atomic write shared by the JUnit report and the response cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.files import atomic_write_text


def test_replaces_whole_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "report.xml"
    target.write_text("old")
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.xml"]


def test_a_failed_rename_raises_and_cleans_up(tmp_path: Path) -> None:
    blocker = tmp_path / "entry.json"
    blocker.mkdir()  # a folder where the file should go: the rename fails
    (blocker / "keep").write_text("x")
    with pytest.raises(OSError):
        atomic_write_text(blocker, "{}")
    assert not list(tmp_path.rglob(".*.tmp")), "the temporary file must not survive the failure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json"]
