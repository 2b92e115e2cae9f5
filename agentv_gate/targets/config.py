"""`.agentv/targets.yaml`: where answers and verdicts come from, with secrets kept out of sight.

The file is AgentV's:

```yaml
targets:
  - name: default
    provider: azure                      # azure | openai | anthropic | mock | cli (+ aliases)
    endpoint: ${{ AZURE_OPENAI_ENDPOINT }}
    api_key: ${{ AZURE_OPENAI_API_KEY }}
    model: ${{ AZURE_DEPLOYMENT_NAME }}
    judge_target: judge                  # the target that grades this one's answers
```

`${{ VAR }}` takes a value from the environment. As in AgentV, secrets (`api_key` and any key
naming a key, token, secret or password) must come from the environment: a literal key in a
file that gets committed is refused. Unlike AgentV, `${{ VAR }}` may also sit inside a longer
string (`http://${{ HOST }}:8000/v1`).

Targets are validated for shape when the file loads, but environment variables are resolved
only when a target is used, so a missing key for a target this run never touches is no error.
Every value that came from a secret field is remembered and scrubbed (`***`) from every output
of the run (see `redaction`). A secret field is one whose name names a key, token, secret or
password (`api_key`, `x-api-key`, `GITHUB_TOKEN` in `env:`), any value of `headers:` read from
`${{ VAR }}` (`Authorization: Bearer ${{ TOKEN }}`: both the whole value and the variable's), and
the password of a URL (`https://user:pass@host`). A variable named like a secret (`OPENAI_API_KEY`)
is one wherever it is read (`command: agent --api-key ${{ OPENAI_API_KEY }}`), and the secrets of
every target in the file are hidden from the start of a run, whether it uses the target or not
(`declared_secrets`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from ..base.defaults import DEFAULT_MAX_RESPONSE_BYTES
from ..base.key_checks import NOT_YET_PROVIDERS, DeclaredOnly, did_you_mean, not_yet_message
from ..base.problems import Problem, no_effect
from ..base.yaml12 import MERGE_KEY_REFUSED
from ..errors import EvalFileError, TargetsConfigError
from ..redaction import environment_secrets, is_secret_field, redact, register_secrets
from ..yaml_reader import load_yaml_text
from .kinds import ALIASES, PROVIDERS
from .settings import ProviderSettings, RetrySettings, Settings
from .target_checks import ENV_REF, any_provider_keys, entry_problems, env_name, key_lines, line_of

S = TypeVar("S", bound=Settings)
_ENV_REF = ENV_REF
"""`${{ VAR }}` (target_checks.py), under the name recording.py imports."""
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@")
RUN_TARGET_HOPS = 5
"""`use_target` steps AgentV's CLI follows for the target a run names (`resolveUseTarget`, eval/targets.ts):
a sixth is refused ('provider' is required)."""
GRADER_TARGET_HOPS = 9
"""Steps AgentV's core follows for any other (`resolveDelegatedTargetDefinition`, depth 10): a grader's target."""
USE_TARGET_ENV = re.compile(r"^\$\{\{\s*([A-Z0-9_]+)\s*\}\}$", re.IGNORECASE)
"""A `use_target` read from the environment: the whole value, as AgentV matches it (else a literal name)."""


@dataclass(frozen=True)
class TargetConfig:
    """One resolved target: environment applied, provider kind normalised, secrets remembered."""

    name: str
    provider: str
    settings: Mapping[str, Any] = field(repr=False)
    """Every key of the target as written, with `${{ VAR }}` resolved (unset optional ones dropped)."""
    judge_target: str | None = None
    workers: int | None = None
    source_file: Path | None = None
    source_line: int | None = None
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    unset_env: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    """Fields reading a `${{ VAR }}` that is unset or empty: field -> those variables' names. A field
    inside a mapping or list is named by its path (`healthcheck.url`, `env.API_TOKEN`, `command[0]`)."""
    _read: dict[type[Settings], Settings] = field(default_factory=dict, init=False, repr=False, compare=False)
    """`read`'s models, each built once (a model is a quarter of a millisecond, and the cache key reads one
    on every request); `without` and `replace` start a new target with none."""

    def declares(self, key: str) -> bool:
        """Whether this target's provider reads `key` (its settings model, targets/settings.py)."""
        return key in _known_keys(self.provider)

    def read(self, model: type[S]) -> S:
        """The settings as `model`, its provider's settings model or one that model extends (settings.py):
        each setting from the first of its spellings that is set."""
        found = self._read.get(model)
        if found is None:
            spec = PROVIDERS.get(self.provider)
            assert spec is not None and issubclass(spec.settings, model), f"{self.provider} does not read {model.__name__}"
            found = self._read[model] = model.read(self.settings)
        assert isinstance(found, model)
        return found

    def required(self, values: Settings, field: str, description: str | None = None) -> Any:
        """`field` of `values` (read from this target), or a TargetsConfigError saying why it is missing:
        the unset `${{ VAR }}` it reads, else the spellings to set."""
        value = getattr(values, field)
        if value is not None:
            return value
        keys = type(values).spellings(field)
        where = _where(self.source_file, self.source_line)
        for key in keys:
            if key in self.unset_env:
                variable = self.unset_env[key][0]
                raise TargetsConfigError(
                    f"{where}{self.describe()}: {description or field} is required, but environment variable "
                    f"'{variable}' (from {key}: ${{{{ {variable} }}}}) is not set or empty"
                )
        raise TargetsConfigError(
            f"{where}{self.describe()}: {description or field} is required (set {' or '.join(keys)})"
        )

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)

    def safe_settings(self) -> dict[str, Any]:
        """Settings fit for logs and results: secret fields shown as `***`."""
        return {k: ("***" if is_secret_field(k) and v is not None else v) for k, v in self.settings.items()}

    @property
    def repo_root(self) -> Path:
        """The folder relative paths in the target mean: the parent of `.agentv/`, else the file's folder."""
        if self.source_file is None:
            return Path.cwd()
        folder = self.source_file.resolve().parent
        return folder.parent if folder.name == ".agentv" else folder

    def __repr__(self) -> str:
        return (
            f"TargetConfig(name={self.name!r}, provider={self.provider!r}, "
            f"judge_target={self.judge_target!r}, settings={self.safe_settings()!r})"
        )

    def describe(self) -> str:
        return f"{self.provider} target '{self.name}'"

    def without(self, keys: set[str]) -> TargetConfig:
        """This target with `keys` left out of its settings: to build its provider again past a setting
        already found unusable, and find the next (`preflight`)."""
        kept = {key: value for key, value in self.settings.items() if key not in keys}
        return replace(self, settings=_declared_settings(kept, self.provider))




class _Found:
    """The problems of one target's values, found one after the other and raised together: the
    error's message is the first, as it always read; its `problems` are all of them, each at the
    line of its key (the target's `- name:` line for a problem of the whole target)."""

    def __init__(self, raw: RawTarget, source_file: Path | None) -> None:
        self.raw = raw
        self.source_file = source_file
        self.messages: list[str] = []
        self.problems: list[Problem] = []

    def add(self, key: str | None, problem: str) -> None:
        line = self.raw.line if key is None else self.raw.key_lines.get(key, self.raw.line)
        self.messages.append(f"{_where(self.source_file, self.raw.line)}target '{self.raw.name}': {problem}")
        self.problems.append(Problem(self.source_file or Path("targets.yaml"), line or 1,
                                     f"target '{self.raw.name}': {problem}"))

    def raise_any(self) -> None:
        if self.messages:
            raise TargetsConfigError(self.messages[0], problems=self.problems)


def response_byte_cap(target: TargetConfig) -> int:
    """The target's `max_response_bytes` (a whole number >= 1), else the default. An answer over it
    is an error for its case, never cut and judged as if whole."""
    raw = target.read(RetrySettings).max_response_bytes
    if raw is None:
        return DEFAULT_MAX_RESPONSE_BYTES
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        where = _where(target.source_file, target.source_line)
        raise TargetsConfigError(
            f"{where}{target.describe()}: max_response_bytes must be a whole number of bytes >= 1, got {raw!r}"
        )
    return raw


class _DeclaredSettings(DeclaredOnly):
    """A target's settings, readable only through the keys its provider declares (targets/settings.py)."""

    reader = "a provider"
    table = "its settings model in targets/settings.py"


def _known_keys(provider: str) -> frozenset[str]:
    spec = PROVIDERS.get(provider)
    return spec.settings.keys() if spec is not None else any_provider_keys()


def _declared_settings(settings: dict[str, Any], provider: str) -> _DeclaredSettings:
    return _DeclaredSettings(settings, _known_keys(provider))


def normalise_provider(raw: str) -> str | None:
    return ALIASES.get(raw.strip().lower())


def _where(source: Path | None, line: int | None) -> str:
    if source is None:
        return ""
    return f"{source}:{line}: " if line else f"{source}: "


def _interpolate(value: str, env: Mapping[str, str]) -> tuple[str | None, list[str]]:
    """Resolve `${{ VAR }}` references: (the value, the variables it reads that are unset or empty).

    A value reading an unset variable gives None, whole (`${{ KEY }}`) or embedded
    (`http://${{ HOST }}:8000`): the caller records every such variable, so the preflight names them
    all at once rather than stopping at the first."""
    unset = [name for name in _ENV_REF.findall(value) if (env.get(name) or "").strip() == ""]
    if unset:
        return None, list(dict.fromkeys(unset))
    return _ENV_REF.sub(lambda match: env[match.group(1)], value), []


def _env_values(value: Any, env: Mapping[str, str]) -> list[str]:
    """The environment values `${{ VAR }}` references in `value` (a string, list or mapping) read."""
    if isinstance(value, str):
        return [env[name] for name in _ENV_REF.findall(value) if env.get(name)]
    if isinstance(value, list):
        return [v for item in value for v in _env_values(item, env)]
    if isinstance(value, dict):
        return [v for item in value.values() for v in _env_values(item, env)]
    return []


def _secret_named_values(value: Any, env: Mapping[str, str]) -> list[str]:
    """The values of `${{ VAR }}` references to variables named like a secret (`OPENAI_API_KEY`,
    `HEALTH_TOKEN`), wherever `value` (a string, list or mapping) holds one.

    Such a value is a secret whatever field reads it (`command: agent --api-key ${{ OPENAI_API_KEY }}`,
    a healthcheck URL's `?token=`, an `env:` entry named `AUTH`), as it is in eval files (loader/env.py).
    """
    if isinstance(value, str):
        return [env[name] for name in _ENV_REF.findall(value) if is_secret_field(name) and env.get(name)]
    if isinstance(value, list):
        return [v for item in value for v in _secret_named_values(item, env)]
    if isinstance(value, dict):
        return [v for item in value.values() for v in _secret_named_values(item, env)]
    return []


def declared_secrets(raw: RawTarget, env: Mapping[str, str]) -> set[str]:
    """The secrets `raw` names, found without resolving it (an unset variable is no error here).

    What `resolve_target` registers for the target it resolves, minus what only resolving gives
    (a whole value built around a reference): the values of secret fields, of `headers:`, of
    secret-named `env:` entries and of secret-named variables anywhere, and URL passwords.
    """
    secrets = set(_secret_named_values(raw.data, env))
    secrets.update(p for p in _url_passwords(raw.data) if "${{" not in p)  # a reference is not the password
    for key, value in raw.data.items():
        key = str(key)
        if is_secret_field(key) or key == "headers":
            secrets.update(_env_values(value, env))
        if key == "env" and isinstance(value, dict):
            secrets.update(v for k, item in value.items() if is_secret_field(str(k))
                           for v in _env_values(item, env))
    return secrets


def _url_passwords(value: Any) -> list[str]:
    """The password in `scheme://user:password@host`, wherever a string holds one."""
    if isinstance(value, str):
        return [m.group(1) for m in _URL_PASSWORD.finditer(value)]
    if isinstance(value, list):
        return [p for item in value for p in _url_passwords(item)]
    if isinstance(value, dict):
        return [p for item in value.values() for p in _url_passwords(item)]
    return []


@dataclass(frozen=True)
class RawTarget:
    """A target as written in the file, before the environment is applied."""

    name: str
    data: Mapping[str, Any]
    line: int | None = None
    key_lines: Mapping[str, int] = field(default_factory=dict)
    """Where each key is written, for problems about one key: top-level keys by name, keys of nested
    mappings and list items by path (`healthcheck.url`, `command[0]`), as `unset_env` names them."""


@dataclass
class TargetsConfig:
    """All targets of one targets.yaml, resolved by name on demand."""

    definitions: dict[str, RawTarget]
    source_file: Path | None = None
    key_problems: list[Problem] = field(default_factory=list)
    """Keys no provider reads, and AgentV features not run yet, in any entry (targets/settings.py)."""
    unknown_providers: dict[str, Problem] = field(default_factory=dict)
    """Targets whose provider neither agentv-gate nor AgentV's built-ins know, each with its refusal: AgentV 4.42
    looks such a name up as a custom provider script (`.agentv/providers/NAME.ts`), so the preflight refuses one
    only when a run uses it or no such script is there (a typo), and says an unused one otherwise."""

    def names(self) -> list[str]:
        return list(self.definitions)

    def __contains__(self, name: object) -> bool:
        return name in self.definitions

    def register_declared_secrets(self, env: Mapping[str, str] | None = None) -> None:
        """Hide, from every output of the run, the secrets of every target in the file, used or not.

        A target this run never resolves still names a key the step's environment holds, which an
        agent or a judge may print (`echo $OPENAI_API_KEY`); a configured secret is hidden wherever
        it shows up, not only when its own target ran.
        """
        source = os.environ if env is None else env
        register_secrets(s for raw in self.definitions.values() for s in declared_secrets(raw, source))
        register_secrets(environment_secrets(source))  # what agents and judges inherit, named or not

    def resolve(self, name: str, env: Mapping[str, str] | None = None) -> TargetConfig:
        """The named target with the environment applied, a `use_target` entry the target it names
        (whose name the result carries, as AgentV's rows do). Raises TargetsConfigError if unusable."""
        raw = self.definitions.get(name)
        if raw is None:
            known = ", ".join(self.names()) or "none"
            where = f"{self.source_file}: " if self.source_file else ""
            raise TargetsConfigError(f"{where}no target named '{name}' (targets defined: {known})")
        concrete = self.definitions[self.concrete(name, env)]
        return resolve_target(concrete, env if env is not None else os.environ, self.source_file)

    def delegates(self, name: str) -> bool:
        """Whether target `name` is a `use_target` entry (it runs another target)."""
        raw = self.definitions.get(name)
        return raw is not None and use_target_of(raw.data) is not None

    def concrete(self, name: str, env: Mapping[str, str] | None = None, hops: int = GRADER_TARGET_HOPS) -> str:
        """The target `name` runs: itself, or the end of its `use_target` chain, as AgentV 4.42 follows it
        (`resolveDelegatedTargetDefinition`): `${{ VAR }}` (the whole value) read from the environment,
        a name looked up, at most `hops` steps. Each refusal in AgentV's words, at the line of the entry
        whose `use_target` names nothing (the first entry's for a loop or a chain too long)."""
        source = os.environ if env is None else env
        current = self.definitions[name]
        visited = [current.name]
        for _ in range(hops + 1):
            written = use_target_of(current.data)
            if written is None:
                return current.name
            match = USE_TARGET_ENV.match(written)
            variable = match.group(1) if match else None
            resolved = (source.get(variable) or "").strip() if variable else written
            if not resolved:
                self._delegation_error(current, f'Target "{current.name}" uses use_target: ${{{{ {variable} }}}}, but '
                                       f"{variable} is not set. Set {variable} to the name of a concrete target "
                                       f'(for example, "azure") before running the eval.')
            following = self.definitions.get(resolved)
            if following is None:
                via = f'${{{{ {variable} }}}}, which resolved to "{resolved}",' if variable else f'"{resolved}",'
                self._delegation_error(current, f'Target "{current.name}" uses use_target: {via} but no target named '
                                       f'"{resolved}" exists.{did_you_mean(resolved, self.names())}')
            if following.name in visited:
                self._delegation_error(self.definitions[name], "Circular use_target reference detected: "
                                       + " -> ".join([*visited, following.name]))
            if len(visited) > hops:
                break
            current = following
            visited.append(current.name)
        first = self.definitions[name]
        limit = ("10" if hops == GRADER_TARGET_HOPS else
                 f"{hops} steps for the target a run names, as AgentV's CLI follows it, where a grader's may take "
                 f"{GRADER_TARGET_HOPS}")
        self._delegation_error(first, f'Target "{name}" exceeded the maximum use_target resolution depth ({limit}). '
                               "Check for a delegation loop or overly deep alias chain.")

    def _delegation_error(self, raw: RawTarget, message: str) -> NoReturn:
        file = self.source_file or Path("targets.yaml")
        line = raw.key_lines.get("use_target", raw.line) or 1
        raise TargetsConfigError(f"{_where(self.source_file, line)}{message}", problems=[Problem(file, line, message)])


def resolve_target(raw: RawTarget, env: Mapping[str, str], source_file: Path | None = None) -> TargetConfig:
    """The target with the environment applied. Every problem of its values is found, not only the
    first: the TargetsConfigError says the first, and carries them all, each at its key's line."""
    found = _Found(raw, source_file)
    settings: dict[str, Any] = {}
    secrets: set[str] = declared_secrets(raw, env)
    register_secrets(secrets)  # now: a problem found below may quote a value read from the environment
    unset_env: dict[str, tuple[str, ...]] = {}

    def resolve_value(key: str, value: Any) -> Any:
        if isinstance(value, str):
            resolved, unset = _interpolate(value, env)
            if unset:
                # nested ones too (`healthcheck.url`, `env.TOKEN`): preflight names them
                unset_env[key] = tuple(unset)
            return resolved
        if isinstance(value, list):
            return [resolve_value(f"{key}[{index}]", v) for index, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: resolve_value(f"{key}.{k}", v) for k, v in value.items()}
        return value

    for key, value in raw.data.items():
        key = str(key)
        if is_secret_field(key) and isinstance(value, str) and value.strip():
            if env_name(value) is None:
                found.add(key, f"{key} must use ${{{{ VARIABLE_NAME }}}} syntax to read it from the "
                               f"environment; a literal secret in targets.yaml is refused")
                continue
        resolved = resolve_value(key, value)
        if resolved is None:
            continue
        settings[key] = resolved
        secrets.update(_url_passwords(resolved))
        if is_secret_field(key):
            secrets.update(_env_values(value, env))
            if isinstance(resolved, str):
                secrets.add(resolved)
        if key == "env" and isinstance(resolved, dict):
            secrets.update(str(v) for k, v in resolved.items() if is_secret_field(str(k)) and v)
        if key == "headers" and isinstance(value, dict) and isinstance(resolved, dict):
            for name, header in value.items():
                if _env_values(header, env) or is_secret_field(str(name)):
                    secrets.update(_env_values(header, env))
                    if isinstance(resolved.get(name), str):
                        secrets.add(resolved[name])

    provider_raw = settings.get("provider")
    if raw.data.get("use_target") is not None and not isinstance(raw.data["use_target"], str):
        found.add("use_target", f"{_USE_TARGET_TEXT}, got {raw.data['use_target']!r}")
    if not isinstance(provider_raw, str) or not provider_raw.strip():
        env_var = env_name(raw.data.get("provider"))
        hint = f" (environment variable '{env_var}' is not set)" if env_var else ""
        found.add(None, f"'provider' is required{hint}; one of {', '.join(PROVIDERS)}")
    provider = normalise_provider(provider_raw) if isinstance(provider_raw, str) else None
    if isinstance(provider_raw, str) and provider is None and provider_raw.strip().lower() in NOT_YET_PROVIDERS:
        feature = NOT_YET_PROVIDERS[provider_raw.strip().lower()]
        found.add(None, not_yet_message(f"provider: {provider_raw}", feature))
    elif isinstance(provider_raw, str) and provider_raw.strip() and provider is None:
        found.add(None, f"unsupported provider '{provider_raw}'; expected one of {', '.join(PROVIDERS)} "
                              f"(or an alias: {', '.join(k for k in ALIASES if k not in PROVIDERS)})")
    judge_key = next((key for key in ProviderSettings.spellings("judge_target") if key in settings), None)
    judge = None if judge_key is None else settings[judge_key]
    if judge is not None and not isinstance(judge, str):
        found.add(judge_key, f"judge_target must be a target name, got {judge!r}")
    workers = settings.get("workers")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        found.add("workers", f"workers must be a whole number >= 1, got {workers!r}")
    found.raise_any()
    assert provider is not None  # else found says why
    register_secrets(secrets)
    return TargetConfig(
        name=raw.name,
        provider=provider,
        settings=_declared_settings(settings, provider),
        judge_target=judge,
        workers=workers,
        source_file=source_file,
        source_line=raw.line,
        secrets=frozenset(secrets),
        unset_env=unset_env,
    )


def _plain(value: Any) -> Any:
    """A value of targets.yaml as plain dicts and lists: a target's settings carry no line bookkeeping."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _key_paths(mapping: dict[str, Any], prefix: str = "") -> dict[str, int]:
    """Where each key of `mapping` (as `yaml_reader` read it) and of the mappings and lists in it is
    written: `{"healthcheck": 6, "healthcheck.url": 7, "command[0]": 3}`."""
    lines: dict[str, int] = {}
    written = key_lines(mapping)
    for key, value in mapping.items():
        path = f"{prefix}{key}"
        lines[path] = written.get(str(key), line_of(mapping))
        lines.update(_nested_paths(value, path, lines[path]))
    return lines


def _nested_paths(value: Any, path: str, line: int) -> dict[str, int]:
    if isinstance(value, dict):
        return _key_paths(value, f"{path}.")
    if isinstance(value, list):
        found: dict[str, int] = {}
        for index, item in enumerate(value):
            item_path = f"{path}[{index}]"
            found[item_path] = line_of(item, line) if isinstance(item, dict) else line
            found.update(_nested_paths(item, item_path, found[item_path]))
        return found
    return {}


def parse_targets(text: str, source_file: Path | None = None) -> TargetsConfig:
    """Parse targets.yaml text. Raises TargetsConfigError for anything malformed."""
    where = f"{source_file}: " if source_file else ""
    try:
        doc = load_yaml_text(text)
    except EvalFileError as exc:
        raise TargetsConfigError(f"{_where(source_file, exc.line)}not valid YAML: {_yaml_problem(exc)}") from None
    if doc is None:
        doc = {}
    items: Any
    if isinstance(doc, list):
        items = doc
    elif isinstance(doc, dict):
        items = doc.get("targets")
        if items is None:
            raise TargetsConfigError(
                f"{where}missing 'targets' list (expected `targets: [{{name, provider, ...}}]`)"
            )
    else:
        raise TargetsConfigError(f"{where}expected a mapping with a 'targets' list, got {type(doc).__name__}")
    if not isinstance(items, list):
        raise TargetsConfigError(f"{where}'targets' must be a list, got {type(items).__name__}")
    definitions: dict[str, RawTarget] = {}
    problems: list[Problem] = []
    unknown: dict[str, Problem] = {}
    if isinstance(doc, dict):
        # AgentV's file: `targets` and its `$schema` tag; a global setting here is read by no target.
        top_lines = key_lines(doc)
        problems.extend(Problem(source_file or Path("targets.yaml"), top_lines.get(str(key), 1),
                                f"unknown key '{key}' at the top of targets.yaml (a target's settings go in its entry)",
                                unknown_key=True)
                        for key in doc if key not in ("targets", "$schema"))
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise TargetsConfigError(f"{where}targets[{index}] must be a mapping, got {type(item).__name__}")
        line = line_of(item)
        data = _plain(item)
        at = _where(source_file, line)
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise TargetsConfigError(f"{at}targets[{index}]: 'name' is required (a non-empty string)")
        if name in definitions:
            raise TargetsConfigError(
                f"{at}duplicate target name '{name}' (first at line {definitions[name].line})"
            )
        provider = data.get("provider")
        if data.get("use_target") is not None and not isinstance(data["use_target"], str):
            # AgentV's schema reads it as text (`z.string()`) and refuses the target when a run resolves it
            problems.append(Problem(source_file or Path("targets.yaml"), key_lines(item).get("use_target", line),
                                    f"target '{name}': {_USE_TARGET_TEXT}, got {data['use_target']!r} "
                                    "(a run that uses this target is refused)", severity="warning"))
        if use_target_of(data) is not None:  # runs the target it names, with that one's settings only
            definitions[name] = RawTarget(name=name, data=data, line=line, key_lines=_key_paths(item))
            problems.extend(_delegating_keys(item, name, source_file or Path("targets.yaml")))
            continue
        if not isinstance(provider, str) or not provider.strip():
            raise TargetsConfigError(
                f"{at}target '{name}': 'provider' is required; one of {', '.join(PROVIDERS)}"
            )
        kind = normalise_provider(provider)
        not_yet = provider.strip().lower() in NOT_YET_PROVIDERS  # refused when a run uses the target
        if env_name(provider) is None and kind is None and not not_yet:
            unknown[name] = Problem(source_file or Path("targets.yaml"), line or 1,
                                    f"target '{name}': unsupported provider '{provider}'"
                                    f"{did_you_mean(provider, [*ALIASES, *NOT_YET_PROVIDERS])}; "
                                    f"expected one of {', '.join(PROVIDERS)}")
        elif not not_yet:
            problems.extend(entry_problems(item, name, kind, PROVIDERS.get(kind or ""), source_file or Path("targets.yaml")))
        definitions[name] = RawTarget(name=name, data=data, line=line, key_lines=_key_paths(item))
    return TargetsConfig(definitions=definitions, source_file=source_file, key_problems=problems,
                         unknown_providers=unknown)


_USE_TARGET_TEXT = "use_target must be a target's name (text)"


def use_target_of(data: Mapping[str, Any]) -> str | None:
    """The target an entry delegates to as written (`use_target`, a non-empty string, trimmed), else None:
    AgentV delegates whenever it is set, a `provider:` beside it notwithstanding."""
    value = data.get("use_target")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _delegating_keys(item: Mapping[str, Any], name: str, file: Path) -> list[Problem]:
    """A `use_target` entry's other keys: AgentV runs the target it names with that target's settings
    whole, so each is read by nothing (a warning, `--strict` an error)."""
    lines = key_lines(item)
    return [no_effect(file, lines.get(str(key), line_of(item)), str(key),
                      f"target '{name}' has use_target, so AgentV runs the target it names with that target's own "
                      "settings", f"no '{key}' on a use_target entry (set it on the target it names)")
            for key in item if str(key) not in ("name", "use_target")]


def _yaml_problem(exc: EvalFileError) -> str:
    """What the reader found wrong, as targets.yaml's messages say it."""
    message = exc.message.removeprefix("malformed YAML: ")
    return f"{message} (write the keys out)" if message == MERGE_KEY_REFUSED else message


def load_targets_file(path: Path) -> TargetsConfig:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TargetsConfigError(f"{path}: cannot read targets file: {exc.strerror or exc}") from None
    return parse_targets(text, Path(path))
