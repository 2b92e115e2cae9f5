"""`run --record DIR` / `run --replay DIR`: the model answers of a run, kept as files, given back offline.

A recording is what lets a pull request without secrets (a fork's) get a real verdict on what it
changed in the eval files: main records its agent's answers (and, with `--record-judges`, its LLM
judges' replies); the pull request replays them, with no network and no key, while its code judges
and deterministic assertions run afresh on the recorded answers.

The folder is plain JSON meant for review and for committing:

    DIR/manifest.json          {"format", "agentv_gate" (the release), "major", "commit", "ref", "judges"}
    DIR/<32 hex>.json          one request: {"format", "request": {...}, "response": {...}} (or "error")

A file's name is the SHA-256 of its canonical request (sorted keys), so one request has one name on
every machine. The request is what decides the answer, as the response cache takes it (`cache.
request_identity`: the provider kind, the URL, the JSON body the provider builds: messages, model,
sampling settings, tool definitions, response format), plus who asks (`target`, `role`), the content
of every attached file (its SHA-256), a judge's trial number, and for a provider with no wire format
(a `cli` agent) its command and the case id it is given. No header that looks like a credential is ever part of it, and
everything written is redacted (every secret the run knows becomes `***`).

Replaying **fails closed**: a request with no file is never sent on. The case errors, naming the
first field in which it differs from the nearest recorded request (the one sharing most fields),
so a reviewer sees what changed (`body.messages[1].content`). Only names of 32 hex digits are read,
through the folder's own descriptor and never through a symlink, so nothing outside DIR is read
whatever the folder holds. A folder recorded by another major release is refused whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, ProviderError
from ..models import TargetResponse
from ..redaction import redact, redact_tree
from .base import Provider, ProviderRequest
from .cache import request_identity
from .config import _ENV_REF, TargetsConfig

RECORDING_FORMAT = 1
MANIFEST = "manifest.json"
ENTRY_NAME = re.compile(r"[0-9a-f]{32}\.json")
NOT_RECORDED = "not_recorded"
AGENT_CHANGED = "agent code changed since the recording"
"""The `failure_reason_code` of a case whose request a replay did not find: it needs a new answer."""
PLACEHOLDER = "agentv-gate-replay-unset"
"""What an unset `${{ VAR }}` of the targets file reads during a replay: the provider can be built (its
request computed), and no call is made with it."""
_ROOT = "<root>"


def _version() -> str:
    from .. import __version__

    return str(__version__)


def major_of(version: str) -> str:
    return version.split(".", 1)[0]


class NotRecordedError(ProviderError):
    """A replayed request the recording has no answer for: the case errors, nothing is called."""


def role_of(request: ProviderRequest) -> str:
    """`target` for the agent under test, `judge` for an LLM judge or a code judge's model call."""
    return "target" if request.role is None else "judge"


def canonical_request(provider: Provider, request: ProviderRequest, root: str) -> dict[str, Any]:
    """What decides the answer to `request`, as JSON-ready data, redacted, paths under `root` written `<root>`."""
    identity = request_identity(provider, request)
    for volatile in ("format", "agentv_gate"):  # the manifest says which release recorded
        identity.pop(volatile, None)
    ordered: dict[str, Any] = {"target": provider.name, "role": role_of(request), **identity}
    if "body" not in identity:  # no wire format: what the agent is given besides the prompt
        target = getattr(provider, "target", None)
        settings = target.safe_settings() if target is not None and hasattr(target, "safe_settings") else {}
        command = {k: v for k, v in sorted(settings.items()) if "command" in k.lower()}
        if command:
            ordered["command"] = command
        ordered["eval_case_id"] = request.eval_case_id
    trial = request.run.trial if request.run is not None else 0
    if trial and role_of(request) == "judge":  # each trial's verdict is a sample of its own, kept apart
        ordered["trial"] = trial
    files = []
    for name in request.input_files:
        try:
            digest = hashlib.sha256(Path(name).read_bytes()).hexdigest()
        except OSError as exc:
            digest = f"unreadable: {exc.strerror or exc}"
        files.append({"path": name, "sha256": digest})
    if files:
        ordered["files"] = files
    text = json.dumps(ordered, ensure_ascii=False, default=str)
    if root:
        text = text.replace(json.dumps(root)[1:-1], _ROOT)
    redactor = getattr(getattr(provider, "target", None), "redact", None)
    text = redactor(text) if callable(redactor) else text
    loaded: dict[str, Any] = redact_tree(json.loads(text))
    return loaded


def request_name(canonical: Mapping[str, Any]) -> str:
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32] + ".json"


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(field path, value) of every leaf, in the request's own order: `body.messages[1].content`."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def first_difference(now: Mapping[str, Any], recorded: Mapping[str, Any]) -> tuple[str, Any, Any] | None:
    """The first field (in `now`'s order, then fields only `recorded` has) whose values differ."""
    mine, theirs = dict(_leaves(now)), dict(_leaves(recorded))
    missing = object()
    for path in [*mine, *(p for p in theirs if p not in mine)]:
        if mine.get(path, missing) != theirs.get(path, missing):
            return path, theirs.get(path, missing) if path in theirs else None, mine.get(path)
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class Manifest:
    agentv_gate: str
    commit: str | None = None
    ref: str | None = None
    judges: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"format": RECORDING_FORMAT, "agentv_gate": self.agentv_gate, "major": major_of(self.agentv_gate),
                "commit": self.commit, "ref": self.ref, "judges": self.judges}

    @property
    def source(self) -> str:
        """`main@abc1234`, what a report names the recorded answers by."""
        commit = (self.commit or "")[:7] or "an unknown commit"
        return f"{self.ref}@{commit}" if self.ref else commit


def current_ref(environ: Mapping[str, str] = os.environ) -> str | None:
    """The branch being recorded: `GITHUB_REF_NAME` in Actions, else the checkout's branch."""
    ref = environ.get("GITHUB_REF_NAME", "").strip()
    if not ref:
        try:
            done = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True,
                                  timeout=5, stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        ref = done.stdout.strip() if done.returncode == 0 and done.stdout.strip() != "HEAD" else ""
    return re.sub(r"[^\w./-]", "_", ref)[:100] or None


class Recorder:
    """`--record DIR`: every answer (and error) of the wrapped providers written as it comes."""

    def __init__(self, folder: Path, manifest: Manifest, root: str) -> None:
        self.folder, self.manifest, self.root = folder, manifest, root
        self.written = 0
        self._lock = threading.Lock()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write(folder / MANIFEST, manifest.to_json())
        except OSError as exc:
            raise ConfigError(f"--record {folder}: cannot write the recording: {exc.strerror or exc}") from exc

    def records(self, request: ProviderRequest) -> bool:
        return role_of(request) == "target" or self.manifest.judges

    def store(self, canonical: dict[str, Any], outcome: dict[str, Any]) -> None:
        entry = {"format": RECORDING_FORMAT, "request": canonical, **redact_tree(outcome)}
        try:
            _write(self.folder / request_name(canonical), entry)
        except OSError as exc:  # a recording that cannot be written must not pass as complete
            raise ProviderError(f"--record {self.folder}: cannot write: {exc.strerror or exc}") from exc
        with self._lock:
            self.written += 1


def _write(path: Path, data: Any) -> None:
    from ..base.files import atomic_write_text

    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


@dataclass
class Replay:
    """`--replay DIR`: the recorded requests, read once at the start, and what the run asked and missed."""

    folder: Path
    manifest: Manifest
    entries: dict[str, dict[str, Any]]
    root: str
    missed: set[str] = field(default_factory=set)
    """Case ids whose request was not recorded (their rows get `failure_reason_code: not_recorded`)."""
    replayed: int = 0
    agent_changed: str | None = None
    """Why the agent's files changed since the recorded commit: then no recorded answer is this agent's."""
    placeholders: dict[str, list[str]] = field(default_factory=dict)
    """Target -> the unset variables a placeholder stood in for: such a target is never called live."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, folder: Path, root: str) -> Replay:
        """Every entry of `folder`, checked; a folder of another major release, or a damaged entry, refused."""
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise ConfigError(f"--replay {folder}: not a recording folder: {exc.strerror or exc}") from exc
        try:
            manifest = _manifest(folder, _read_json(fd, MANIFEST, folder))
            entries = {}
            for name in sorted(os.listdir(fd)):
                if ENTRY_NAME.fullmatch(name):
                    entry = _read_json(fd, name, folder)
                    if not isinstance(entry, dict) or not isinstance(entry.get("request"), dict) \
                            or request_name(entry["request"]) != name:
                        raise ConfigError(f"--replay {folder}: {name} is not the recording of the request it "
                                          "holds (its name is the hash of its request); record again")
                    entries[name] = entry
        finally:
            os.close(fd)
        return cls(folder, manifest, entries, root)

    def answer(self, provider: Provider, request: ProviderRequest) -> TargetResponse:
        canonical = canonical_request(provider, request, self.root)
        entry = self.entries.get(request_name(canonical))
        stale = self.agent_changed is not None and role_of(request) == "target"
        if entry is None or stale:
            with self._lock:
                if request.eval_case_id:
                    self.missed.add(request.eval_case_id)
            raise NotRecordedError(f"not in the recording {self.folder}: {AGENT_CHANGED} ({self.manifest.source}): "
                                   f"{self.agent_changed}; a replay gives this agent no answer (record again)"
                                   if stale else self.miss_message(canonical))
        with self._lock:
            self.replayed += 1
        if "error" in entry:
            raise ProviderError(str(entry["error"]))
        try:
            return TargetResponse.model_validate(entry.get("response"))
        except ValidationError as exc:
            raise ProviderError(f"--replay {self.folder}: {request_name(canonical)} holds no usable answer: "
                                f"{exc.errors()[0].get('msg')}") from None

    def miss_message(self, canonical: dict[str, Any]) -> str:
        """Which recorded request is nearest (most fields equal, among those of the same target and role
        first), and the first field where this one differs."""
        who = (canonical.get("target"), canonical.get("role"))
        candidates = [(n, e["request"]) for n, e in self.entries.items()
                      if (e["request"].get("target"), e["request"].get("role")) == who] \
            or [(n, e["request"]) for n, e in self.entries.items()]
        head = f"not in the recording {self.folder} (a replay never calls the model; record again)"
        if not candidates:
            return f"{head}: it holds no request at all"
        mine = set(_key(p, v) for p, v in _leaves(canonical))
        name, nearest = max(candidates, key=lambda c: (len(mine & {_key(p, v) for p, v in _leaves(c[1])}),
                                                       [-ord(ch) for ch in c[0]]))
        differs = first_difference(canonical, nearest)
        if differs is None:  # unreachable: equal requests have equal names
            return head
        path, was, now = differs
        return redact(f"{head}: the nearest recorded request ({name}) differs first at `{path}`: recorded "
                      f"{_shown(was)}, now {_shown(now)}")


def _key(path: str, value: Any) -> str:
    return path + "\0" + json.dumps(value, sort_keys=True, default=str)


def _read_json(fd: int, name: str, folder: Path) -> Any:
    """`name` inside the folder open as `fd`: a regular file, never through a symlink."""
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        raise ConfigError(f"--replay {folder}: cannot read {name}: {exc.strerror or exc} (a recording's files "
                          "are plain files inside it)") from exc
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise ConfigError(f"--replay {folder}: {name} is not a plain file")
        with os.fdopen(os.dup(handle), "rb") as stream:
            data = stream.read()
    finally:
        os.close(handle)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigError(f"--replay {folder}: {name} is not JSON: {exc}") from None


def _manifest(folder: Path, data: Any) -> Manifest:
    if not isinstance(data, dict) or not isinstance(data.get("agentv_gate"), str):
        raise ConfigError(f"--replay {folder}: {MANIFEST} does not say which agentv-gate recorded it")
    recorded, running = data["agentv_gate"], _version()
    if data.get("format") != RECORDING_FORMAT or major_of(recorded) != major_of(running):
        raise ConfigError(f"--replay {folder}: recorded by agentv-gate {recorded}, and this is {running}: a "
                          "recording is replayed only by the major release that made it (it holds answers as "
                          "that release read them); record again")
    commit, ref = data.get("commit"), data.get("ref")
    return Manifest(recorded, commit if isinstance(commit, str) else None, ref if isinstance(ref, str) else None,
                    data.get("judges") is True)


class _Wrapping:
    """A provider standing in for `inner`: its name, kind and every other attribute are `inner`'s."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name, self.kind = inner.name, inner.kind

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being made): never recurse into itself
            raise AttributeError(name)
        return getattr(self.inner, name)


class RecordingProvider(_Wrapping):
    """`inner`, with each answer it gives (or error it raises) written to the recording."""

    def __init__(self, inner: Provider, recorder: Recorder) -> None:
        super().__init__(inner)
        self.recorder = recorder

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        if not self.recorder.records(request):
            return self.inner.invoke(request)
        canonical = canonical_request(self.inner, request, self.recorder.root)
        try:
            response = self.inner.invoke(request)
        except Exception as exc:
            self.recorder.store(canonical, {"error": str(exc) or type(exc).__name__})
            raise
        self.recorder.store(canonical, {"response": response.model_dump(mode="json", exclude_none=True)})
        return response


class ReplayingProvider(_Wrapping):
    """`inner`, never called for what the recording holds: its answers come from the folder."""

    def __init__(self, inner: Provider, replay: Replay) -> None:
        super().__init__(inner)
        self.replay = replay

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        if role_of(request) == "target" or self.replay.manifest.judges:
            return self.replay.answer(self.inner, request)
        unset = self.replay.placeholders.get(self.name)
        if unset:  # a live judge call, and its key is not here
            raise ProviderError(f"judge target '{self.name}' reads {', '.join(unset)}, unset, and the recording "
                                f"{self.replay.folder} has no judge replies (record with --record-judges)")
        return self.inner.invoke(request)


def recording_wrapper(recorder: Recorder) -> Callable[[Provider], Provider]:
    return lambda provider: RecordingProvider(provider, recorder)


def replaying_wrapper(replay: Replay) -> Callable[[Provider], Provider]:
    return lambda provider: ReplayingProvider(provider, replay)


def replay_env(targets: TargetsConfig, environ: Mapping[str, str], replay: Replay) -> dict[str, str]:
    """`environ` with each `${{ VAR }}` the targets file reads and the environment lacks set to a
    placeholder: a replay builds every provider (to compute its requests) without the keys it never uses."""
    env = dict(environ)
    for name, raw in targets.definitions.items():
        read = {key: value for key, value in raw.data.items() if key != "use_target"}  # a name, never a key
        unset = sorted({var for text in _strings(read) for var in _ENV_REF.findall(text)
                        if not (environ.get(var) or "").strip()})
        if unset:
            replay.placeholders[name] = unset
            env.update({var: PLACEHOLDER for var in unset})
    return env


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


__all__ = ["NOT_RECORDED", "Manifest", "NotRecordedError", "Recorder", "Replay", "current_ref",
           "recording_wrapper", "replay_env", "replaying_wrapper"]
