"""A workspace template copied into a fresh folder, as AgentV 2.19 copies `workspace.template`.

AgentV copies the template once per suite (its default `isolation: shared`), skipping `.git`
folders, into a new folder the suite's cases then share: the cli target runs there (the folder is
its working directory, over the target's own `cwd`), each hook gets it as `workspace_path`, and a
code judge gets it as `workspace_path` and `AGENTV_WORKSPACE_PATH`. A shared folder is why AgentV
runs such a suite's cases one at a time; `execution/hooks.py` does the same. The copy is made in
the system's temporary folder (AgentV's ~/.agentv/workspaces is outside what the gate may write)
and removed when the run ends.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


def empty_workspace() -> Path:
    """A new empty folder: the workspace of a suite with hooks and no template, as AgentV 2.19 makes
    one ("create empty workspace") rather than let the hooks and the agent work in the eval folder."""
    return Path(tempfile.mkdtemp(prefix="agentv-gate-workspace-"))


def copy_template(template: Path) -> Path:
    """A new folder holding `template`'s files and folders, minus any `.git`; files keep their mode.

    Folders are made writable whatever the template's were, so the agent may write in them and the
    copy can be removed (AgentV makes them with `mkdir`)."""
    workspace = empty_workspace()
    try:
        _copy_into(template, workspace)
    except BaseException:
        shutil.rmtree(workspace, ignore_errors=True)
        raise
    return workspace


def _copy_into(source: Path, destination: Path) -> None:
    for entry in sorted(source.iterdir()):
        if entry.name == ".git":
            continue
        target = destination / entry.name
        if entry.is_dir():
            target.mkdir()
            _copy_into(entry, target)
        else:
            shutil.copy2(entry, target)


def remove_workspace(workspace: Path) -> None:
    """Remove a copy, read-only files included; a copy already gone is no error."""
    shutil.rmtree(workspace, ignore_errors=True)
