"""The user documentation as one text: README.md (the landing page) and the pages under docs/, in
the order mkdocs.yml lists them, so a test that checks what the docs promise finds it wherever it lives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def doc_pages() -> list[Path]:
    """README.md, then each page of mkdocs.yml's nav."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [ROOT / "README.md", *(ROOT / "docs" / next(iter(entry.values())) for entry in nav)]


DOCS = "\n".join(path.read_text(encoding="utf-8") for path in doc_pages())


SHELL_LANGUAGES = ("sh", "bash", "console", "shell")
_FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class ShellBlock:
    """A shell block of the docs: where it is, its commands, and why it is not run here, if it is not."""

    page: Path
    line: int
    commands: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def shell_blocks() -> list[ShellBlock]:
    """Every ```sh / ```bash / ```console block of the docs, once (docs/index.md repeats the README).

    A block that is not meant to run here (it needs GitHub, the network, act or a secret, or is
    the reader's own project) says so in the line above its fence: `<!-- not run: REASON -->`.
    In a console block only the `$ ` lines are commands; the others are what they print.
    """
    blocks: list[ShellBlock] = []
    seen: set[str] = set()
    for page in doc_pages():
        text = page.read_text(encoding="utf-8")
        for fence in _FENCE.finditer(text):
            if fence.group(1) not in SHELL_LANGUAGES or fence.group(2) in seen:
                continue
            seen.add(fence.group(2))
            before = text[:fence.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = _NOT_RUN.search(before)
            commands = fence.group(2)
            if fence.group(1) == "console":
                commands = "".join(line[2:] + "\n" for line in commands.splitlines() if line.startswith("$ "))
            blocks.append(ShellBlock(page, text.count("\n", 0, fence.start()) + 1, commands,
                                     marker.group(1) if marker else None))
    return blocks
