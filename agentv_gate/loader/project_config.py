"""AgentV's project config, `.agentv/config.yaml`: the nearest one between an eval file and the
repository root, as AgentV looks for it.

Two of its settings change what AgentV scores: `guideline_patterns` (which attached files are
guidelines, listed for the judge instead of pasted into the prompt) and `eval_patterns` (which files
are suites). agentv-gate runs neither, so a config that sets one is refused at its line rather than
scored differently in silence. The rest (`execution.workers`, `verbose`, ...) are AgentV's run-time
preferences, which change no verdict and are left to AgentV.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import EvalFileError
from ..files import nearest_agentv_file
from .problems import Problem
from .yaml_lines import key_line, load_yaml_text, read_text

NOT_RUN = {
    "guideline_patterns": "it decides which attached files AgentV treats as guidelines, which changes the prompts",
    "eval_patterns": "it decides which files AgentV runs as suites",
}
CONFIG_NAMES = ("config.yaml", "config.yml")


def nearest_config(eval_file: Path, repo_root: Path) -> Path | None:
    """The `.agentv/config.yaml` AgentV would read for `eval_file`: in its folder or the nearest above,
    up to the repository root."""
    return nearest_agentv_file(eval_file.parent, CONFIG_NAMES, repo_root)


def project_config_problems(configs: Iterable[Path]) -> list[Problem]:
    """A problem for each setting of these config files that agentv-gate does not run, at its line."""
    problems: list[Problem] = []
    for config in dict.fromkeys(configs):
        try:
            data = load_yaml_text(read_text(config))
        except EvalFileError as exc:
            problems.append(Problem(config, exc.line, exc.message, exc.expected))
            continue
        if not isinstance(data, dict):
            continue
        problems.extend(Problem(config, key_line(data, key), f"'{key}' is not run by agentv-gate: {why}",
                                f"no '{key}' (agentv-gate's own rules are in its README)")
                        for key, why in NOT_RUN.items() if key in data)
    return problems
