"""The start `run` and `validate` share: the eval paths a command reads, with AgentV's `.env` loaded first."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UsageError
from ..loader import default_eval_paths, load_run_dotenv
from ..report.text import inert_lines, one_line


def eval_paths(args: argparse.Namespace) -> list[Path]:
    """The paths named on the command line (else the default folders), after the `.env` found for the
    first eval file has been loaded: before any eval file or targets file is read, so a `${{ VAR }}` in
    either sees it (see `loader.env`). What it set is said on stderr unless `--quiet`."""
    if args.repo_root is not None and not args.repo_root.is_dir():
        # it roots '/'-prefixed references and bounds scripts: a typo must not pass for a root
        raise UsageError(f"--repo-root {args.repo_root} is not a folder (the repository root; "
                         "default: the nearest folder above the eval files with .git)")
    paths = default_eval_paths(args.paths)
    note = load_run_dotenv(paths, args.repo_root, getattr(args, "allow_outside_root", False))
    if note and not args.quiet:
        print(inert_lines(f"agentv-gate: {one_line(note)}"), file=sys.stderr)  # it names a path of the repository
    return paths
