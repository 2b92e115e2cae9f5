"""What the orchestrator runs around a case: trials and their aggregate, stop policies, workspace hooks.

Below the orchestrator and beside the evaluators (it imports neither), so each piece reads and
tests on its own.
"""
