"""The atomic write shared by the JUnit report and the response cache."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentv_gate.base.files import atomic_write_text


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


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_the_written_file_has_the_umask_permissions(tmp_path: Path, umask: int) -> None:
    """The temporary file is created 0600; the report must come out as any file the user creates."""
    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "junit.xml", "<testsuites/>")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "junit.xml").stat().st_mode) == 0o666 & ~umask
