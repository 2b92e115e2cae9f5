"""File references: resolved relative to the eval file's folder, then the repo root.

A leading `/` means "from the repo root" as AgentV has it. A reference that resolves outside
the repo root is refused unless the run allows it: a pull request must not be able to make
the gate read or execute files elsewhere on the runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..base.files import resolves_inside
from ..errors import EvalFileError


@dataclass(frozen=True)
class SearchRoots:
    eval_dir: Path
    repo_root: Path
    allow_outside_root: bool = False
    guideline_patterns: tuple[str, ...] = ()
    """The project config's `guideline_patterns` (`project_config`): which attached files are guidelines."""

    def candidates(self, ref: str, base: Path | None = None) -> list[Path]:
        ref_path = Path(ref).expanduser()
        if ref_path.is_absolute():
            # AgentV: "/prompts/x.md" is repo-relative; a real absolute path is taken as it is.
            stripped = Path(str(ref).lstrip("/"))
            return [self.repo_root / stripped, ref_path]
        first = base if base is not None else self.eval_dir
        out = [first / ref_path, *(folder / ref_path for folder in self._search_dirs)]
        return list(dict.fromkeys(out))

    @cached_property
    def _search_dirs(self) -> list[Path]:
        """AgentV's search roots: the eval file's folder, each parent up to the repo root, the root.
        The same for every reference in a file, so worked out (and resolved) once."""
        between = [] if not self.inside_root(self.eval_dir) else [
            parent for parent in self.eval_dir.parents if self.inside_root(parent) and parent != self.repo_root]
        return [self.eval_dir, *between, self.repo_root]

    @property
    def search_dirs(self) -> list[Path]:
        """The eval file's folder, each parent inside the repo root, then the root: nearest first."""
        return self._search_dirs

    @cached_property
    def _resolved_root(self) -> Path:
        return self.repo_root.resolve()

    def shown(self, path: Path) -> str:
        """`path` as the reader finds it: relative to the repository root when inside it (the runner's
        checkout folder means nothing in a pull request), else absolute."""
        try:
            return path.relative_to(self.repo_root).as_posix()
        except ValueError:
            return str(path)

    def inside_root(self, path: Path) -> bool:
        return resolves_inside(path, self._resolved_root)

    @cached_property
    def _found(self) -> dict[tuple[str, Path | None], Path]:
        return {}

    def resolve(self, ref: str, line: int, what: str, base: Path | None = None) -> Path:
        """The first existing candidate, absolute; else a located 'not found' error.

        What was found is remembered for the file: a suite of thousands of cases names the same
        judge script in every one, and each lookup costs several `realpath` walks.
        """
        known = self._found.get((ref, base))
        if known is not None:
            return known
        try:
            tried = self.candidates(ref, base)
        except (OSError, ValueError, RuntimeError) as exc:  # `~user` unknown, NUL byte
            raise EvalFileError(line, f"{what} {ref!r} is not a usable path: {exc}", "an existing file") from None
        for cand in tried:
            try:
                found = cand.is_file()
                resolved = cand.resolve() if found else cand
            except (OSError, ValueError, RuntimeError):  # name too long, NUL byte, symlink loop
                found = False
            if found:
                if not self.allow_outside_root and not self.inside_root(resolved):
                    raise EvalFileError(
                        line,
                        f"{what} {ref!r} resolves outside the repository root ({resolved})",
                        f"a path inside {self.repo_root} (or run with --allow-outside-root)",
                    )
                self._found[(ref, base)] = resolved
                return resolved
        shown = ", ".join(self.shown(p) for p in tried)
        raise EvalFileError(line, f"{what} {ref!r} not found (looked in: {shown})", "an existing file")


def find_repo_root(start: Path) -> Path:
    """The enclosing git checkout, else the nearest folder holding `.agentv`, else the working folder.

    Git wins so that suite names, annotations and `/`-prefixed references are relative to the
    repository a pull request changes, even when `.agentv/` lives in a subfolder.
    """
    start = start.resolve()
    folders = [start, *start.parents]
    for marker in (".git", ".agentv"):
        for folder in folders:
            if (folder / marker).exists():
                return folder
    return Path.cwd().resolve()
