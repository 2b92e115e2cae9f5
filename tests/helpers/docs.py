"""The user documentation as one text: README.md (the landing page) and the pages under docs/, in
the order mkdocs.yml lists them, so a test that checks what the docs promise finds it wherever it lives."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def doc_pages() -> list[Path]:
    """README.md, then each page of mkdocs.yml's nav."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [ROOT / "README.md", *(ROOT / "docs" / next(iter(entry.values())) for entry in nav)]


DOCS = "\n".join(path.read_text(encoding="utf-8") for path in doc_pages())
