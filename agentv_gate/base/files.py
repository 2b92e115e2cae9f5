"""Writing a file so that readers see the old content or the new, never half of it, and never
through a symlink that leads out of the repository.

Shared by the JUnit report (a CI step may read it while a re-run writes it), the results JSONL
and the response cache (workers and shards write the same entry at once).
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


def project_root(start: Path) -> Path:
    """Where the lookup of a project file (targets.yaml, `.agentv/config.yaml`, `.agentv/gate.yaml`)
    stops: the git top level holding `start`; without git, the working folder when `start` lies in
    it, else `start`'s own folder. Never a folder above, so a `~/.agentv/` on a self-hosted runner
    (or any file a pull request cannot see) never picks a run's endpoints, keys or quarantine."""
    current = Path(os.path.abspath(start))
    if current.is_file():
        current = current.parent
    for folder in (current, *current.parents):
        if (folder / ".git").exists():
            return folder
    cwd = Path(os.path.abspath(os.getcwd()))
    return cwd if current == cwd or cwd in current.parents else current


def project_file(start: Path, candidates: tuple[str, ...], root: Path | None = None) -> Path | None:
    """The first of `candidates` (paths relative to a folder: `targets.yaml`, `.agentv/targets.yaml`)
    in `start`'s folder, then in each folder above it up to `root` (default: `project_root(start)`)
    and never above: AgentV's `buildDirectoryChain` lookup, bounded by the repository.

    A candidate that is a symlink (or lies under one) resolving outside the root raises
    `EscapingSymlinkError`: a committed `gate.yaml -> /home/runner/.agentv/gate.yaml` is refused,
    not followed."""
    current = Path(os.path.abspath(start))
    if current.is_file():
        current = current.parent
    limit = Path(os.path.abspath(root)) if root is not None else project_root(current)
    if limit != current and limit not in current.parents:
        limit = current  # `start` outside the root: its own folder only
    real_limit = limit.resolve()
    while True:
        for name in candidates:
            candidate = current / name
            if candidate.is_file():
                real = candidate.resolve()
                if real != real_limit and real_limit not in real.parents:
                    raise EscapingSymlinkError(errno.EPERM, f"{candidate} is a symlink that resolves outside the "
                                               f"repository ({real}); a project file must lie inside {limit}",
                                               str(candidate))
                return candidate
        if current == limit or current.parent == current:
            return None
        current = current.parent


def nearest_agentv_file(start: Path, names: tuple[str, ...], stop_at: Path | None = None) -> Path | None:
    """The nearest `.agentv/<name>` (the first of `names` found) from `start` upwards, not above
    `stop_at` (default: the repository root, `project_root`)."""
    return project_file(start, tuple(f".agentv/{name}" for name in names), stop_at)


class EscapingSymlinkError(OSError):
    """A path inside the repository that a symlink sends outside it: writing there is refused."""


def resolves_inside(path: Path, resolved_root: Path) -> bool:
    """Whether `path`, its links followed, is `resolved_root` or under it. A path that cannot be resolved
    (a link loop, an unreadable folder) is not: the callers refuse what lies outside the repository."""
    try:
        return path.resolve().is_relative_to(resolved_root)
    except (OSError, RuntimeError):
        return False


@functools.lru_cache(maxsize=8)
def _repository_of(cwd: str) -> tuple[Path, Path]:
    """The nearest folder at or above `cwd` holding `.git` (`cwd` itself when there is none), as
    named and resolved: looked up once per folder, not at every write (the response cache writes an
    entry per call, from every worker)."""
    start = Path(os.path.abspath(cwd))
    root = next((folder for folder in (start, *start.parents) if (folder / ".git").exists()), start)
    return root, root.resolve()


def _is_device(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def refuse_escaping_symlink(path: Path) -> None:
    """Raise `EscapingSymlinkError` when `path` lies in the repository (of the working folder) by
    name but a symlink on the way (the file itself or a folder above it) leads outside.

    A pull request can commit `.agentv-gate/junit.xml -> /home/runner/.bashrc`; the gate must not
    write there. A path named outside the repository on purpose (`--junit /tmp/x.xml`) is left
    alone: that choice was made on the command line, not in the repository; so is a link to a
    device or pipe (`/dev/null`), which writes no file.
    """
    absolute = Path(os.path.abspath(path))
    root, real_root = _repository_of(os.getcwd())
    try:
        absolute.relative_to(root)
    except ValueError:
        return
    real = absolute.resolve()
    try:
        real.relative_to(real_root)
    except ValueError:
        if _is_device(real):
            return  # `/dev/null`, `/dev/full`, a FIFO: nothing on disk outside is written
        raise EscapingSymlinkError(
            errno.EPERM, f"refusing to write through a symlink that leads outside the repository ({path} -> {real})",
        ) from None


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows.

    Linux shows it in /proc/self/status. Elsewhere it can only be read by setting it and setting it
    back; the lock keeps two of our threads from doing that at once (a file created by another
    thread in that instant would get mode 0666 & ~0o077, stricter, never looser).
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


OWN_FOLDER_GITIGNORE = "# Created by agentv-gate: its output, never to be committed.\n*\n"


def make_own_folder(folder: Path) -> None:
    """Create a folder the gate owns (its results, its response cache), and, when this call creates it,
    a `.gitignore` of `*` inside, as `.pytest_cache` has: `git add -A` never takes it, whatever the
    project's own .gitignore says. A folder that already exists (one the user made) is left as it is."""
    if folder.is_dir():
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir()
    except FileExistsError:
        return  # made meanwhile (another worker), or a file in the way: the caller's write says so
    try:
        (folder / ".gitignore").write_text(OWN_FOLDER_GITIGNORE, encoding="utf-8")
    except OSError:
        pass  # the folder still works; only git would see its files


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it into place.

    Raises OSError (disk full, no permission); the temporary file never outlives a failure.
    """
    with atomic_writer(path) as handle:
        handle.write(text)


@contextmanager
def atomic_writer(path: Path) -> Iterator[TextIO]:
    """A text handle on a temporary file beside `path`, renamed into place when the block ends
    without an exception; for a file written piece by piece (never whole in memory).

    Raises `EscapingSymlinkError` (an OSError) for a path a symlink sends out of the repository."""
    refuse_escaping_symlink(path)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file 0600; the report must come out as any file the user creates
        # (0644 under the usual umask), or a later step running as another user cannot read it.
        os.chmod(temp, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
