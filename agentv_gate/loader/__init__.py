"""Eval files -> EvalCase lists, with every problem located at file:line (re-exports only).

The loader never raises for bad content: a broken case becomes a `Problem` and the file's
other cases still load, so one typo cannot hide the rest of a suite's results.
"""

from __future__ import annotations

from ..base.problems import Problem
from .dependencies import dependency_groups, left_out_dependencies, with_dependencies
from .discover import default_eval_paths, discover_eval_files, nothing_found
from .env import load_run_dotenv
from .plan import KEEP_CASES, CaseRef, SuitePlan, filter_refs, plan_paths
from .refs import find_repo_root
from .suite import LoadResult, iter_eval_file, load_eval_file

__all__ = ["KEEP_CASES", "CaseRef", "LoadResult", "Problem", "SuitePlan", "default_eval_paths", "dependency_groups",
           "left_out_dependencies", "with_dependencies", "discover_eval_files",
           "filter_refs", "find_repo_root", "iter_eval_file", "load_eval_file", "load_run_dotenv", "nothing_found",
           "plan_paths"]
