"""What the orchestrator runs around a case: stop policies, workspace hooks, per-suite workers (the trial
strategies are a table below every layer: base/trial_strategies.py).

Below the orchestrator and beside the evaluators (it imports neither), so each piece reads and
tests on its own.
"""
