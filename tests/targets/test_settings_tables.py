"""targets.yaml is data: each provider's settings one model (targets/settings.py), its checks listed on its kind.

A branch per provider in the targets layer (`kind == "cli"`) is how the 11-branch check chain grew, and a
setting read under a spelling written only at its call site is how the docs and the refusals drifted apart;
these tests make the next one a red test instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentv_gate.base.key_checks import NOT_YET
from agentv_gate.targets import config as targets_config
from agentv_gate.targets.config import parse_targets
from agentv_gate.targets.kinds import ALIASES, PROVIDERS
from agentv_gate.targets.settings import HealthcheckSettings, MockRuleSettings, ProviderSettings, Settings

ROOT = Path(__file__).resolve().parents[2]
TARGETS = Path(targets_config.__file__).parent
DOCS = ROOT / "docs" / "targets.md"
AGENTV = ROOT.parent / "shared" / "agentv"

NAMES = "|".join(re.escape(name) for name in sorted(ALIASES, key=len, reverse=True))
KIND_BRANCH = re.compile(rf"\b(kind|provider)\s*(==|!=|(not\s+)?in\s+\()[^#]*[\"']({NAMES})[\"']")
"""`kind == "cli"`, `target.provider == "mock"`, `kind in ("mock", "anthropic")`: a branch on a provider kind."""


def test_the_targets_layer_branches_on_no_provider_kind() -> None:
    found = [f"{path.name}:{number}: {line.strip()}"
             for path in sorted(TARGETS.glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if KIND_BRANCH.search(line)]
    assert not found, "a branch per provider (declare it on the kind in kinds.py):\n" + "\n".join(found)


def test_no_call_site_spells_a_setting_again() -> None:
    """A setting is read through its model's field (`settings.endpoint`), never by listing its spellings at the
    call site (`target.get("endpoint", "base_url", ...)`), where they drift from the declared ones."""
    pairs = {(names[i], names[i + 1]) for spec in PROVIDERS.values() for names in spec.settings.every_spelling()
             for i in range(len(names) - 1)}
    spelled = re.compile("|".join(rf"[\"']{re.escape(a)}[\"'],\s*[\"']{re.escape(b)}[\"']" for a, b in pairs))
    found = [f"{path.name}:{number}: {line.strip()}"
             for path in sorted(TARGETS.glob("*.py")) if path.name != "settings.py"
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if spelled.search(line)]
    assert not found, "\n".join(found)


def test_each_spelling_belongs_to_one_setting_of_a_model() -> None:
    for model in (*(spec.settings for spec in PROVIDERS.values()), HealthcheckSettings, MockRuleSettings):
        spellings = [key for names in model.every_spelling() for key in names]
        assert len(spellings) == len(set(spellings)), model.__name__


def _row(names: tuple[str, ...]) -> str:
    others = f" ({', '.join(f'`{name}`' for name in names[1:])})" if names[1:] else ""
    return f"`{names[0]}`{others}"


def settings_table() -> str:
    """The docs' table of every setting, rendered from the models: a row per setting (its spellings, in the
    order they are read), a column per provider: `yes` read, `warns` accepted and ignored, as AgentV does."""
    kinds = list(PROVIDERS)
    rows: dict[str, dict[str, str]] = {}
    for kind, spec in PROVIDERS.items():
        ignored = spec.settings.ignored()
        nested: list[tuple[str, type[Settings]]] = [("", spec.settings)]
        nested += [("healthcheck.", HealthcheckSettings)] if "healthcheck" in spec.settings.keys() else []
        nested += [("responses[].", MockRuleSettings)] if "responses" in spec.settings.keys() else []
        for prefix, model in nested:
            for names in model.every_spelling():
                if prefix == "" and names[0] in ("name", "provider"):
                    continue
                row = rows.setdefault(prefix + _row(names), {})
                row[kind] = "warns" if names[0] in ignored else "yes"
    lines = [f"| setting (other spellings, read in this order) | {' | '.join(kinds)} |",
             f"|---|{'|'.join('---' for _ in kinds)}|"]
    lines += [f"| {row} | {' | '.join(marks.get(kind, '') for kind in kinds)} |" for row, marks in rows.items()]
    return "\n".join(lines)


def test_the_docs_table_is_the_models() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = settings_table()
    assert table in text, f"docs/targets.md's settings table is not the models'; paste this one:\n\n{table}\n"


def _agentv_known(version: str) -> dict[str, set[str]]:
    """AgentV's targets validator: provider -> the settings it knows (a key it does not know, it warns about
    and ignores)."""
    source = (AGENTV / f"src-{version}" / "packages/core/src/evaluation/validation/targets-validator.ts")
    text = source.read_text(encoding="utf-8")
    sets: dict[str, set[str]] = {}
    for name, body in re.findall(r"const (\w+)_SETTINGS = new Set(?:<string>)?\(\[(.*?)\]\);", text, re.S):
        keys = set(re.findall(r"'([^']+)'", body))
        for spread in re.findall(r"\.\.\.(\w+)_SETTINGS", body):
            keys |= sets.get(spread, set())
        sets[name] = keys
    return {"azure": sets["AZURE"], "anthropic": sets["ANTHROPIC"], "gemini": sets["GEMINI"],
            "mock": sets["MOCK"], **({"openai": sets["OPENAI"]} if "OPENAI" in sets else {})}


@pytest.mark.skipif(not AGENTV.is_dir(), reason="../shared/agentv is missing")
@pytest.mark.parametrize("version", ["2.19.0", "4.42.4"])
def test_no_setting_agentv_knows_is_refused(version: str) -> None:
    """Every setting AgentV's validator knows for a provider is one its model declares (read, or accepted with a
    warning), or one of AgentV's features not run yet (refused by name, never as unknown)."""
    for kind, keys in _agentv_known(version).items():
        known = PROVIDERS[kind].settings.keys() | set(NOT_YET["target"])
        assert keys - known - {"workspace_template", "workspaceTemplate"} == set(), (version, kind)


@pytest.mark.parametrize(("entry", "key", "line"), [
    ("provider: openai\n    model: m\n    subagent_mode_allowed: false", "subagent_mode_allowed", 5),
    ("provider: mock\n    response: hi\n    trace: [{type: tool_call, name: search}]", "trace", 5),
])
def test_a_setting_agentv_accepts_and_ignores_is_a_located_warning(entry: str, key: str, line: int) -> None:
    [problem] = parse_targets(f"targets:\n  - name: a\n    {entry}\n", Path("t.yaml")).key_problems
    assert (problem.line, problem.severity, problem.no_effect) == (line, "warning", True)
    assert problem.message.startswith(f"'{key}' has no effect here: target 'a': AgentV 4.42")


def test_a_spelling_no_field_declares_is_refused_at_its_line() -> None:
    [problem] = parse_targets("targets:\n  - name: a\n    provider: openai\n    model: m\n    endpont: http://x\n",
                              Path("t.yaml")).key_problems
    assert (problem.line, problem.severity, problem.unknown_key) == (5, "error", True)
    assert problem.message == "unknown key 'endpont' in target 'a' (did you mean 'endpoint'?)"


def test_common_settings_are_every_kinds() -> None:
    common = ProviderSettings.keys()
    assert all(common <= spec.settings.keys() for spec in PROVIDERS.values())
