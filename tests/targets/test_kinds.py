"""targets/kinds.py: the one table of provider kinds that config, registry and cache all read."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from agentv_gate.errors import TargetsConfigError
from agentv_gate.models import TargetResponse
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.cache import CachingProvider, ResponseCache, caching_wrapper
from agentv_gate.targets.config import TargetConfig, parse_targets
from agentv_gate.targets.kinds import ALIASES, PROVIDERS, ProviderKind
from agentv_gate.targets.registry import ProviderRegistry, build_provider
from agentv_gate.targets.settings import ProviderSettings


class Parrot:
    """A provider kind that exists only in this test, added to the table as a user would add one."""

    kind = "parrot"

    def __init__(self, target: TargetConfig) -> None:
        self.name = target.name
        self.target = target

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        return TargetResponse(text=request.question)


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_every_kind_names_a_class_whose_kind_is_its_key(kind: str) -> None:
    spec = PROVIDERS[kind]
    cls = getattr(importlib.import_module(spec.module, "agentv_gate.targets"), spec.cls)
    assert cls.kind == kind


def test_every_spelling_names_one_kind_and_each_kind_names_itself() -> None:
    spellings = [name for kind, spec in PROVIDERS.items() for name in (kind, *spec.aliases)]
    assert len(spellings) == len(set(spellings)) == len(ALIASES)
    assert all(ALIASES[kind] == kind for kind in PROVIDERS)
    assert all(name == name.lower() for name in ALIASES)


def test_what_the_table_says_about_judging_and_caching() -> None:
    assert {k for k, spec in PROVIDERS.items() if spec.judges} == {"openai", "azure", "anthropic", "gemini", "agentv", "mock"}
    # an agentv grader is never cached: its tools read each run's workspace
    assert {k for k, spec in PROVIDERS.items() if spec.cacheable} == {"openai", "azure", "anthropic", "gemini"}


def test_a_provider_added_as_one_line_is_resolved_built_judged_and_cached(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(PROVIDERS, "parrot", ProviderKind(__name__, "Parrot", ProviderSettings, aliases=("polly",), judges=False))
    monkeypatch.setitem(ALIASES, "parrot", "parrot")
    monkeypatch.setitem(ALIASES, "polly", "parrot")
    targets = parse_targets("targets:\n  - name: bird\n    provider: Polly\n")
    target = targets.resolve("bird", {})
    assert target.provider == "parrot"
    provider = build_provider(target)
    assert isinstance(provider, Parrot)
    assert ProviderRegistry(targets, {}).judge_name_for("bird") is None
    assert isinstance(caching_wrapper(ResponseCache(tmp_path))(provider), CachingProvider)


def test_an_unknown_kind_in_a_hand_made_target_is_a_config_error() -> None:
    with pytest.raises(TargetsConfigError, match="target 't': unsupported provider 'bedrock'"):
        build_provider(TargetConfig(name="t", provider="bedrock", settings={}))
