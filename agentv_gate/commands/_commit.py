"""Which commit a run judges, stamped on its rows so a later comparison can name its base's commit."""

from __future__ import annotations

import os
import re
import subprocess

_SHA = re.compile(r"[0-9a-f]{7,64}")


def judged_commit(env: dict[str, str] | None = None) -> str | None:
    """`GITHUB_SHA` in GitHub Actions, else the checkout's `HEAD`; None outside a git checkout.

    Only a hexadecimal object name is kept: the value ends up in a pull-request comment."""
    env = dict(os.environ) if env is None else env
    sha = env.get("GITHUB_SHA", "").strip().lower()
    if not sha:
        try:
            done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                                  stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        sha = done.stdout.strip().lower() if done.returncode == 0 else ""
    return sha if _SHA.fullmatch(sha) else None
