"""The checks of one targets.yaml entry, as data: what every entry gets, and each kind's own checks.

Every entry is checked against its kind's settings model (settings.py): a key the model does not
declare is refused at its line, a second spelling of one setting too (only the first written is read),
an on/off setting that is neither, a setting AgentV accepts and ignores is a located warning. What only
one provider needs (a cli target's healthcheck, a mock's rules, an anthropic `temperature` beside
`thinking_budget`) is a `Check` listed on that kind in `kinds.py`; nothing here branches on a kind's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.defaults import MAX_DURATION_MS
from ..base.key_checks import NOT_YET, not_yet_message, unknown_key_problems
from ..base.problems import Problem, no_effect
from .api_format import api_format_problem
from .settings import (
    AnthropicSettings,
    CliSettings,
    HealthcheckSettings,
    MockRuleSettings,
    MockSettings,
    ProviderSettings,
    RetrySettings,
    Settings,
)

if TYPE_CHECKING:
    from .kinds import ProviderKind

ENV_REF = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_WHOLE_ENV_REF = re.compile(r"^\s*\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$")

Check = Callable[[dict[str, Any], str, Path], list[Problem]]
"""One kind's own check of an entry (the mapping as read, with its lines; its name; the file)."""


def env_name(value: Any) -> str | None:
    """The variable a whole `${{ VAR }}` value names, else None."""
    if isinstance(value, str):
        match = _WHOLE_ENV_REF.match(value)
        if match:
            return match.group(1)
    return None


def line_of(mapping: Any, default: int = 1) -> int:
    """Where a mapping of targets.yaml is written: its first key's line (a mapping's own start can sit
    on a blank line before it)."""
    lines = getattr(mapping, "key_lines", None)
    if lines:
        return int(next(iter(lines.values())))
    return int(getattr(mapping, "line", default))


def key_lines(mapping: Any) -> dict[str, int]:
    """Each key's line in a mapping of targets.yaml, by the key as text (`1:` is "1")."""
    return {str(key): line for key, line in getattr(mapping, "key_lines", {}).items()}


def entry_problems(item: dict[str, Any], name: str, kind: str | None, spec: ProviderKind | None,
                   file: Path) -> list[Problem]:
    """Every problem of one entry of provider `kind` (None: a `${{ VAR }}` provider, known once resolved)."""
    model = spec.settings if spec is not None else None
    problems = mapping_problems(item, model, f"target '{name}'", file, NOT_YET["target"])
    for nested in (spec.nested if spec is not None else ()):
        problems.extend(nested(item, name, file))
    problems.extend(_switches(item, name, kind, spec, file))
    problems.extend(_ignored(item, name, model or ProviderSettings, file))
    for check in (spec.checks if spec is not None else ()):
        problems.extend(check(item, name, file))
    problems.extend(_overlong_durations(item, name, file))
    return problems


def any_provider_keys() -> frozenset[str]:
    """For an entry whose `provider` comes from the environment: every key some kind knows."""
    from .kinds import PROVIDERS

    return frozenset().union(*(spec.settings.keys() for spec in PROVIDERS.values()))


def mapping_problems(mapping: Any, model: type[Settings] | None, where: str, file: Path,
                     not_yet: dict[str, str] | None = None) -> list[Problem]:
    """The keys of `mapping` that `model` does not declare, and each second spelling of one setting."""
    lines = key_lines(mapping)
    at = line_of(mapping)
    keys = dict(mapping)
    known = model.keys() if model is not None else any_provider_keys()
    found = unknown_key_problems(keys, known, not_yet or {}, where, lambda key: lines.get(key, at))
    problems = [Problem(file, p.line, p.message, unknown_key=p.unknown) for p in found]
    spellings = model.every_spelling() if model is not None else ProviderSettings.every_spelling()
    problems.extend(Problem(file, line, message, unknown_key=True)
                    for line, message in _second_spellings(keys, lines, at, where, spellings))
    return problems


def _second_spellings(keys: dict[str, Any], lines: dict[str, int], at: int, where: str,
                      spellings: tuple[tuple[str, ...], ...]) -> list[tuple[int, str]]:
    """(line, message) for each spelling of a setting written beside an earlier one the provider reads
    instead (`base_url` beside `endpoint`). An earlier one that is a whole `${{ VAR }}` may be unset,
    and the later one read then: no problem."""
    found: list[tuple[int, str]] = []
    for names in spellings:
        written = [name for name in names if name in keys]
        if len(written) < 2 or env_name(keys[written[0]]) is not None:
            continue
        first = written[0]
        found.extend((lines.get(key, at), f"'{key}' in {where} is never read: '{first}' (line {lines.get(first, at)}) "
                      f"is written too, and only the first of {', '.join(names)} is read") for key in written[1:])
    return found


def _ignored(item: dict[str, Any], name: str, model: type[Settings], file: Path) -> list[Problem]:
    """A setting AgentV accepts and never acts on (`ignored=` on its field): accepted, and said where."""
    lines = key_lines(item)
    at = line_of(item)
    return [no_effect(file, lines.get(key, at), key, f"target '{name}': {why}")
            for key, why in model.ignored().items() if key in item]


def _switches(item: dict[str, Any], name: str, kind: str | None, spec: ProviderKind | None,
              file: Path) -> list[Problem]:
    """AgentV's on/off settings (`switch=True` on their field): only true or false, as AgentV's schema
    takes them, never any other value read as off. `provider_batching: true` is run where the kind
    `batches` (a cli target, `cli_batch.py`), accepted with a warning where AgentV sends the cases one
    by one anyway, and refused as not run yet for a provider still a `${{ VAR }}`."""
    lines = key_lines(item)
    at = line_of(item)
    model = spec.settings if spec is not None else ProviderSettings
    batching = ProviderSettings.spellings("provider_batching")
    found: list[Problem] = []
    for key in model.switches():
        value = item.get(key)
        if key not in item or env_name(value) is not None:
            continue
        if not isinstance(value, bool):
            found.append(Problem(file, lines.get(key, at), f"'{key}' in target '{name}' must be true or false, got "
                                 f"{value!r} (AgentV refuses any other value)", unknown_key=False))
        elif not value or key not in batching or (spec is not None and spec.batches):
            continue
        elif spec is None:
            found.append(Problem(file, lines.get(key, at), not_yet_message(
                f"{key}: true", "provider batching: one agent run answering every case"), unknown_key=False))
        else:
            found.append(no_effect(file, lines.get(key, at), key, f"target '{name}' ({kind}): AgentV 2.19 batches "
                                   "only cli and vscode targets, and sends this one's cases one by one, as without it"))
    return found


def _durations() -> dict[str, float]:
    """Every duration some provider reads (`ms=` on its field) -> how many ms one unit of it is: bounded on
    any entry, so a duration written on the wrong provider is said to be too long as well as unknown."""
    from .kinds import PROVIDERS

    return {key: scale for kind in PROVIDERS.values() for key, scale in kind.settings.durations().items()}


def _overlong_durations(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """Each duration longer than `MAX_DURATION_MS`, in the target and its healthcheck: refused here,
    where it is written, rather than overflowing a clock mid-run. A `${{ VAR }}` is read when the
    target is resolved, where the same bound holds."""
    found: list[Problem] = []
    check = item.get("healthcheck")
    for mapping, where, durations in ((item, f"target '{name}'", _durations()),
                                      (check, f"the healthcheck of target '{name}'", HealthcheckSettings.durations())):
        if not isinstance(mapping, dict):
            continue
        lines = key_lines(mapping)
        at = line_of(mapping, line_of(item))
        for key, scale in durations.items():
            value = mapping.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > MAX_DURATION_MS / scale:
                found.append(Problem(file, lines.get(key, at), f"'{key}' in {where}: {value!r} is longer than any run "
                                     f"waits; expected at most {duration_limit(scale)}"))
    return found


def duration_limit(scale: float) -> str:
    """The bound in the unit of a key whose one unit is `scale` ms: `2147483.647 seconds`, `2147483647 ms`."""
    return f"{MAX_DURATION_MS} ms" if scale == 1.0 else f"{MAX_DURATION_MS / scale:.3f} seconds"


# Each kind's own checks, listed on the kind in kinds.py.

def healthcheck_keys(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """A cli target's `healthcheck:` mapping against `HealthcheckSettings`."""
    check = item.get("healthcheck")
    if not isinstance(check, dict):
        return []
    return mapping_problems(check, HealthcheckSettings, f"the healthcheck of target '{name}'", file)


def mock_rule_keys(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """Each rule of a mock target's `responses:` list against `MockRuleSettings`."""
    rules = item.get("responses")
    if not isinstance(rules, list):
        return []
    return [p for index, rule in enumerate(rules) if isinstance(rule, dict)
            for p in mapping_problems(rule, MockRuleSettings, f"responses[{index}] of target '{name}'", file)]


HEALTHCHECK_KEYS_BY_KIND: dict[str, frozenset[str]] = {
    "command": frozenset({"type", *HealthcheckSettings.spellings("command"), "cwd",
                          *HealthcheckSettings.spellings("timeout_seconds")}),
    "http": frozenset({"type", "url", *HealthcheckSettings.spellings("timeout_seconds")}),
}
"""What each kind of healthcheck reads (cli_target.py): a key only the other kind reads is refused."""

CLI_HEALTHCHECK_RETRY_KEYS = tuple(key for field in RetrySettings.model_fields if field != "max_response_bytes"
                                   for key in RetrySettings.spellings(field))
"""A cli target's retry keys: read by its http healthcheck only (the command itself is never retried)."""

CLI_UNREAD_KEYS = CliSettings.spellings("request_timeout_seconds")
"""Retry keys a cli target never reads: its command's timeout is `timeout_seconds`, its
healthcheck's `healthcheck.timeout_seconds` (which replaces the request timeout of the http check)."""


def _healthcheck_kind(check: dict[str, Any]) -> str | None:
    """As cli_target reads it: `type:`, else `url` makes an http check and a command a command check."""
    kind = check.get("type")
    if kind is None:
        kind = "http" if "url" in check else "command" if any(
            k in check for k in HealthcheckSettings.spellings("command")) else None
    return kind if kind in HEALTHCHECK_KEYS_BY_KIND else None  # anything else is refused when it is built


def cli_unread_keys(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """Each key a cli target reads somewhere but not where it is written: a healthcheck key only the
    other kind of healthcheck reads, a retry key without an http healthcheck to retry,
    `request_timeout_seconds`, and `files_format` for a command with no `{FILES}`."""
    lines = key_lines(item)
    at = line_of(item)
    where = f"target '{name}'"
    found: list[tuple[int, str]] = []
    check = item.get("healthcheck")
    kind = _healthcheck_kind(check) if isinstance(check, dict) else None
    if isinstance(check, dict) and kind is not None:
        other = "command" if kind == "http" else "http"
        described = {"http": "an http healthcheck" + ("" if "type" in check else " (it has 'url')"),
                     "command": "a command healthcheck"}
        check_lines = key_lines(check)
        check_at = line_of(check, at)
        found.extend((check_lines.get(key, check_at),
                      f"'{key}' in the healthcheck of {where}: {described[kind]} does not read it "
                      f"(read by: {'an http' if other == 'http' else 'a command'} healthcheck)")
                     for key in check if key in HEALTHCHECK_KEYS_BY_KIND[other]
                     and key not in HEALTHCHECK_KEYS_BY_KIND[kind])
    for key in item:
        if key in CLI_UNREAD_KEYS:
            found.append((lines.get(key, at), f"'{key}' in {where}: a cli target does not read it (its command's "
                          "timeout is timeout_seconds, its healthcheck's is healthcheck.timeout_seconds)"))
        elif key in CLI_HEALTHCHECK_RETRY_KEYS and kind != "http":
            found.append((lines.get(key, at), f"'{key}' in {where}: the command of a cli target is never retried; "
                          "only an http healthcheck (healthcheck: {url: ...}) reads it"))
    command = _command(item)
    if isinstance(command, str) and ENV_REF.search(command) is None and "{FILES}" not in command:
        found.extend((lines.get(key, at), f"'{key}' in {where}: its command has no {{FILES}}, so nothing reads it")
                     for key in item if key in CliSettings.spellings("files_format"))
    return [Problem(file, line, message, unknown_key=True) for line, message in found]


def _command(item: dict[str, Any]) -> Any:
    return next((item[k] for k in CliSettings.spellings("command") if item.get(k)), None)


def cli_batching_with_files(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """`provider_batching: true` on a cli target whose command takes `{FILES}`: not run yet."""
    lines = key_lines(item)
    at = line_of(item)
    return [Problem(file, lines.get(key, at), not_yet_message(
                f"{key}: true", "provider batching with {FILES}: every case's files given to one run"),
                unknown_key=False)
            for key in ProviderSettings.spellings("provider_batching")
            if item.get(key) is True and "{FILES}" in str(_command(item) or "")]


def mock_delay_range(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """A mock's `delay_ms` beside a delay range: never read, as in AgentV's mock (the range picks the delay)."""
    lines = key_lines(item)
    at = line_of(item)
    ranged = [key for key in (*MockSettings.spellings("delay_min_ms"), *MockSettings.spellings("delay_max_ms"))
              if item.get(key) not in (None, 0)]
    return [Problem(file, lines.get(key, at), f"'{key}' in target '{name}' is never read: delay_min_ms/delay_max_ms "
                    f"(line {lines.get(ranged[0], at)}) pick the delay instead", unknown_key=True)
            for key in MockSettings.spellings("delay_ms") if key in item and ranged]


def anthropic_replaced(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """An anthropic `structured_output` (no reply schema is ever sent to Anthropic) and a `temperature`
    beside `thinking_budget` (extended thinking takes none, so it is never sent)."""
    lines = key_lines(item)
    at = line_of(item)
    found = [(lines.get(key, at), f"'{key}' in target '{name}' is never read: an anthropic target sends no reply "
              "schema (its judges ask for their JSON in the prompt)")
             for key in AnthropicSettings.spellings("structured_output") if key in item]
    thinking = next((key for key in AnthropicSettings.spellings("thinking_budget") if item.get(key) is not None), None)
    if thinking is not None and "temperature" in item:
        found.append((lines.get("temperature", at), f"'temperature' in target '{name}' is never sent: with {thinking} "
                      f"(line {lines.get(thinking, at)}), Anthropic's extended thinking takes no temperature"))
    return [Problem(file, line, message, unknown_key=True) for line, message in found]


def openai_api_format(item: dict[str, Any], name: str, file: Path) -> list[Problem]:
    """An `api_format` other than `chat` or `responses` (api_format.py)."""
    refused = api_format_problem(item, name)
    if refused is None:
        return []
    return [Problem(file, key_lines(item).get(refused[0], line_of(item)), refused[1])]
