"""A real pseudo-terminal for reporter tests: what a user's terminal would receive, escapes included."""

from __future__ import annotations

import os


def read_pty(master: int) -> str:
    """Everything written to the terminal so far (the reading end, without blocking)."""
    os.set_blocking(master, False)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except (BlockingIOError, OSError):
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")
