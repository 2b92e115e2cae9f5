"""The filesystem tools AgentV 4.42's built-in agent grader gets over the case's workspace.

Three tools, with AgentV's names, descriptions, JSON schemas and results (llm-grader.ts,
`createFilesystemTools`), each result sent as compact JSON:

* `list_files {path = "."}`: the folder's entries (one level), `[{"name", "type": "directory"|"file"}]`,
  sorted by name as Node's `readdir` returns them, the first 100;
* `read_file {path}`: `{"content", "truncated", "size"}`, the first 50 KB (51,200 bytes) decoded as UTF-8,
  `truncated` when the file is larger; a folder is `{"error": "'PATH' is a directory, not a file"}`;
* `search_files {pattern, path = "."}`: a JavaScript regex, case-insensitive, tested on every line of every
  file under the path (names in SEARCH_SKIP_DIRS skipped, binary extensions and files over 50 KB skipped),
  `{"matches": [{"file", "line", "text"}], "total"}`, at most 20 matches, each line cut to 200 characters.

A path is resolved against the workspace as Node's `path.resolve` does (an absolute path replaces it, `..`
climbs), and one that leaves the workspace is `{"error": "Path 'P' is outside the workspace"}`, AgentV's
words. The gate also refuses what AgentV follows: a path that leaves the workspace through a symbolic link
(the real path is checked too, so `/proc` or a link to `/etc` is never read) and a file that is not a
regular file (a FIFO would block the run); a search never follows a link, as AgentV's does not. Every
result is redacted of the run's secrets before the model sees it. Other errors are `{"error": "CODE:
message, syscall 'PATH'"}` as Node words them.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from ..base.jscompat import compile_js_regex
from ..redaction import redact
from ..targets.base import ProviderTool

MAX_FILE_SIZE = 50 * 1024
MAX_SEARCH_MATCHES = 20
MAX_LISTED = 100
MAX_LINE_TEXT = 200
SEARCH_SKIP_DIRS = frozenset({"node_modules", ".git", ".next", "dist", "__pycache__", ".cache"})
BINARY_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".ico", ".svg", ".woff", ".woff2", ".ttf", ".eot",
                               ".mp3", ".mp4", ".wav", ".zip", ".tar", ".gz", ".pdf", ".exe", ".dll", ".so", ".dylib"})

_NODE_MESSAGES = {errno.ENOENT: "no such file or directory", errno.ENOTDIR: "not a directory",
                  errno.EACCES: "permission denied", errno.EISDIR: "illegal operation on a directory",
                  errno.ELOOP: "too many symbolic links encountered"}


V8_REGEX_REASONS = {"missing ), unterminated subpattern": "Unterminated group", "unbalanced parenthesis": "Unmatched ')'",
                    "nothing to repeat": "Nothing to repeat", "multiple repeat": "Nothing to repeat",
                    "unterminated character set": "Unterminated character class",
                    "bad escape (end of pattern)": "\\ at end of pattern",
                    "min repeat greater than max repeat": "numbers out of order in {} quantifier"}
"""Python's words for a broken pattern -> V8's, which AgentV's `new RegExp` error carries to the model."""


def regex_error(pattern: str, problem: ValueError) -> str:
    """`Invalid regex pattern: Invalid regular expression: /P/gi: REASON`, in V8's words where known."""
    try:
        re.compile(pattern)
    except re.error as exc:
        reason = V8_REGEX_REASONS.get(exc.msg, exc.msg)
    else:
        reason = str(problem)
    return f"Invalid regex pattern: Invalid regular expression: /{pattern}/gi: {reason}"


class _Outside(Exception):
    pass


def _node_error(exc: OSError, syscall: str, path: str) -> str:
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    text = _NODE_MESSAGES.get(exc.errno or 0, (exc.strerror or "i/o error").lower())
    return f"{code}: {text}, {syscall} '{path}'"


def _text_path(value: Any, default: str) -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise TypeError(f'The "paths[1]" argument must be of type string. Received {type(value).__name__}')
    return value


class WorkspaceTools:
    """The three tools over one workspace folder (its real path, so a link cannot move it)."""

    def __init__(self, workspace: str | Path) -> None:
        self.shown = os.path.abspath(str(workspace))
        """The workspace as AgentV names it in messages and relative paths."""
        self.root = os.path.realpath(self.shown)

    def resolve(self, relative: str) -> str:
        """AgentV's resolveSandboxed, then the real path's check: the absolute path, or _Outside."""
        resolved = os.path.normpath(os.path.join(self.shown, relative))
        if not (resolved == self.shown or resolved.startswith(self.shown + os.sep)):
            raise _Outside(f"Path '{relative}' is outside the workspace")
        real = os.path.realpath(resolved)
        if not (real == self.root or real.startswith(self.root + os.sep)):
            raise _Outside(f"Path '{relative}' is outside the workspace")
        return resolved

    def list_files(self, args: dict[str, Any]) -> Any:
        try:
            resolved = self.resolve(_text_path(args.get("path"), "."))
            with os.scandir(resolved) as entries:
                found = sorted(entries, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        except _Outside as exc:
            return {"error": str(exc)}
        except OSError as exc:
            return {"error": _node_error(exc, "scandir", resolved)}
        except TypeError as exc:
            return {"error": str(exc)}
        return [{"name": e.name, "type": "directory" if e.is_dir(follow_symlinks=False) else "file"}
                for e in found][:MAX_LISTED]

    def read_file(self, args: dict[str, Any]) -> Any:
        relative = args.get("path")
        shown = relative if isinstance(relative, str) else ""
        try:
            resolved = self.resolve(_text_path(relative, ""))
        except (_Outside, TypeError) as exc:
            return {"error": str(exc)}
        try:
            info = os.stat(resolved)
            if stat.S_ISDIR(info.st_mode):
                return {"error": f"'{shown}' is a directory, not a file"}
            if not stat.S_ISREG(info.st_mode):
                return {"error": f"'{shown}' is not a regular file"}
            with open(resolved, "rb") as handle:
                data = handle.read(min(info.st_size, MAX_FILE_SIZE))
        except OSError as exc:
            return {"error": _node_error(exc, "stat" if not os.path.exists(resolved) else "open", resolved)}
        return {"content": data.decode("utf-8", errors="replace"), "truncated": info.st_size > MAX_FILE_SIZE,
                "size": info.st_size}

    def search_files(self, args: dict[str, Any]) -> Any:
        try:
            resolved = self.resolve(_text_path(args.get("path"), "."))
        except (_Outside, TypeError) as exc:
            return {"error": str(exc)}
        pattern = args.get("pattern")
        source = pattern if isinstance(pattern, str) else "" if pattern is None else str(pattern)
        try:
            regex = compile_js_regex(source, "gi")
        except ValueError as exc:
            return {"error": regex_error(source, exc)}
        matches: list[dict[str, Any]] = []
        self._search(resolved, regex, matches)
        return {"matches": matches, "total": len(matches)}

    def _search(self, folder: str, regex: Any, matches: list[dict[str, Any]]) -> None:
        if len(matches) >= MAX_SEARCH_MATCHES:
            return
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        except OSError:
            return
        for entry in entries:
            if len(matches) >= MAX_SEARCH_MATCHES:
                return
            if entry.name in SEARCH_SKIP_DIRS:
                continue
            if entry.is_dir(follow_symlinks=False):
                self._search(entry.path, regex, matches)
            elif entry.is_file(follow_symlinks=False):
                if os.path.splitext(entry.name)[1].lower() in BINARY_EXTENSIONS:
                    continue
                try:
                    if entry.stat(follow_symlinks=False).st_size > MAX_FILE_SIZE:
                        continue
                    with open(entry.path, "rb") as handle:
                        content = handle.read(MAX_FILE_SIZE + 1).decode("utf-8", errors="replace")
                except OSError:
                    continue
                for number, line in enumerate(content.split("\n"), start=1):
                    if len(matches) >= MAX_SEARCH_MATCHES:
                        return
                    if regex.test(line):
                        matches.append({"file": os.path.relpath(entry.path, self.shown), "line": number,
                                        "text": line[:MAX_LINE_TEXT]})

    def tools(self) -> list[ProviderTool]:
        """The tools as AgentV offers them, each result redacted of the run's secrets."""
        return [
            ProviderTool("list_files", "List files and directories at a relative path within the workspace. Returns "
                         "names only (single level, no recursion).",
                         {"type": "object", "properties": {"path": {
                             "type": "string", "description": 'Relative path within workspace (use "." for root)',
                             "default": "."}}},
                         _redacted(self.list_files)),
            ProviderTool("read_file", "Read the content of a file at a relative path within the workspace. Large "
                         "files are truncated at 50KB.",
                         {"type": "object", "properties": {"path": {
                             "type": "string", "description": "Relative path to file within workspace"}},
                          "required": ["path"]},
                         _redacted(self.read_file)),
            ProviderTool("search_files", "Search for a regex pattern across files in the workspace. Returns up to 20 "
                         "matches. Skips binary files and node_modules/.git.",
                         {"type": "object", "properties": {
                             "pattern": {"type": "string", "description": "Regex pattern to search for"},
                             "path": {"type": "string",
                                      "description": 'Relative path to search within (use "." for root)',
                                      "default": "."}},
                          "required": ["pattern"]},
                         _redacted(self.search_files)),
        ]


def _redacted(run: Any) -> Any:
    def execute(arguments: Any) -> str:
        result = run(arguments if isinstance(arguments, dict) else {})
        return redact(json.dumps(result, ensure_ascii=False, separators=(",", ":")))
    return execute
