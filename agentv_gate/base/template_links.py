"""Which links in a workspace template point outside the folders the copy may read.

A template's link is committed by whoever wrote the pull request; copied as what it points at, a
link to `/etc/…`, to `~/.ssh` or to `/proc/self/environ` would put the runner's files, or the gate's
own environment with its tokens, in the agent's workspace. So a link that resolves outside the
repository is refused (at `validate` and again when the copy is made); a link inside it is copied
as its content. `.git` folders are never copied and so never looked into.
"""

from __future__ import annotations

from pathlib import Path

from .files import resolves_inside


def outside_link(template: Path, roots: tuple[Path, ...]) -> tuple[Path, str] | None:
    """The first link under `template` (sorted, through linked folders as the copy goes) resolving
    outside every folder of `roots`, or not at all (a loop of links), and what is wrong with it
    (`resolves to /etc/passwd, outside the repository`); None when there is none."""
    return _walk(template, roots, (template.resolve(),))


def _walk(folder: Path, roots: tuple[Path, ...], parents: tuple[Path, ...]) -> tuple[Path, str] | None:
    for entry in sorted(folder.iterdir()):
        if entry.name == ".git":
            continue
        if entry.is_symlink() and not any(resolves_inside(entry, root) for root in roots):
            try:
                return entry, f"resolves to {entry.resolve()}, outside the repository"
            except (OSError, RuntimeError):
                return entry, "cannot be resolved (a loop of links)"
        if entry.is_dir() and entry.resolve() not in parents:  # a loop is the copy's to refuse
            found = _walk(entry, roots, (*parents, entry.resolve()))
            if found is not None:
                return found
    return None


__all__ = ["outside_link"]
