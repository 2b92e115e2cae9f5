"""Writing a file so that readers see the old content or the new, never half of it.

Shared by the JUnit report (a CI step may read it while a re-run writes it) and the response
cache (workers and shards write the same entry at once).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it into place.

    Raises OSError (disk full, no permission); the temporary file never outlives a failure.
    """
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
