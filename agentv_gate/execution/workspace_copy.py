"""A workspace template copied into a fresh folder, as AgentV 2.19 copies `workspace.template`.

AgentV copies the template once per suite (its default `isolation: shared`), skipping `.git`
folders, into a new folder the suite's cases then share: the cli target runs there (the folder is
its working directory, over the target's own `cwd`), each hook gets it as `workspace_path`, and a
code judge gets it as `workspace_path` and `AGENTV_WORKSPACE_PATH`. A shared folder is why AgentV
runs such a suite's cases one at a time; `execution/hooks.py` does the same. The copy is made in
the system's temporary folder (AgentV's ~/.agentv/workspaces is outside what the gate may write)
and removed when the run ends.

A link in the template is copied as what it points at, which must be inside the repository (or the
template): one resolving elsewhere is refused here as at `validate` (base/template_links.py), so a
link to `/proc/self/environ` or `~/.ssh` never puts the runner's secrets in the agent's folder. A
link whose target is missing is copied as a link; a folder linking to one of its own parents is refused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..base.template_links import outside_link


def empty_workspace() -> Path:
    """A new empty folder: the workspace of a suite with hooks and no template, as AgentV 2.19 makes
    one ("create empty workspace") rather than let the hooks and the agent work in the eval folder."""
    return Path(tempfile.mkdtemp(prefix="agentv-gate-workspace-"))


def copy_template(template: Path, roots: tuple[Path, ...] = ()) -> Path:
    """A new folder holding `template`'s files and folders, minus any `.git`; files keep their mode.

    Folders are made writable whatever the template's were, so the agent may write in them and the
    copy can be removed (AgentV makes them with `mkdir`). Raises OSError for a link resolving
    outside `roots` (the template itself always counts), or not at all."""
    found = outside_link(template, (*roots, template.resolve()))
    if found is not None:
        raise OSError(f"the link {found[0]} {found[1]}")
    workspace = empty_workspace()
    try:
        _copy_into(template, workspace, (template.resolve(),))
    except BaseException:
        shutil.rmtree(workspace, ignore_errors=True)
        raise
    return workspace


def _copy_into(source: Path, destination: Path, parents: tuple[Path, ...]) -> None:
    for entry in sorted(source.iterdir()):
        if entry.name == ".git":
            continue
        target = destination / entry.name
        if entry.is_symlink() and not entry.exists():
            os.symlink(os.readlink(entry), target)
        elif entry.is_dir():
            real = entry.resolve()
            if real in parents:
                raise OSError(f"the link {entry} points at a folder holding it")
            target.mkdir()
            _copy_into(entry, target, (*parents, real))
        else:
            shutil.copy2(entry, target)


def remove_workspace(workspace: Path) -> None:
    """Remove a copy, read-only files included; a copy already gone is no error."""
    shutil.rmtree(workspace, ignore_errors=True)
