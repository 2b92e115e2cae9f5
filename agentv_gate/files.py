"""Writing a file so that readers see the old content or the new, never half of it.

Shared by the JUnit report (a CI step may read it while a re-run writes it) and the response
cache (workers and shards write the same entry at once).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it into place.

    Raises OSError (disk full, no permission); the temporary file never outlives a failure.
    """
    with atomic_writer(path) as handle:
        handle.write(text)


@contextmanager
def atomic_writer(path: Path) -> Iterator[TextIO]:
    """A text handle on a temporary file beside `path`, renamed into place when the block ends
    without an exception; for a file written piece by piece (never whole in memory)."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
