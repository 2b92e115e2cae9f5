"""`--comment` (run, merge) and `agentv-gate comment`: one sticky pull-request comment per workflow and
suite set, created on the first push and updated in place on every later one.

The comment is found again by a hidden marker whose key is a hash of the workflow's name and the
eval paths the run was given (`comment_key`), so two workflows, or two gate steps on different
suites, keep a comment each, and a push never adds a second one. Where GitHub is: `GITHUB_API_URL`
(GitHub Enterprise included), `GITHUB_REPOSITORY`, the pull request's number from the event file at
`GITHUB_EVENT_PATH`; the token: `AGENTV_GATE_GITHUB_TOKEN` (what the action passes its `github-token`
input as; taken out of the environment at once, so no target or judge the run starts inherits a
token that can write to the repository), else `GITHUB_TOKEN`.

Nothing here changes the verdict: no pull request (a push build), no token, a read-only token (a
fork's pull request), a missing permission, a rate limit, an API that cannot be reached all end in
one warning line that names the cause and the permission to add; the exit code stays the gate's.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..models import CaseResult
from ..redaction import register_secrets
from ..report.github import append_step_summary, escape_data
from ..report.rows import ReportedCase
from ..report.text import inert_log_text, one_line
from ..report.usage import UsageTotals

if TYPE_CHECKING:  # the comment's renderer is imported where a comment is posted: most runs post none
    from ..report.baseline.compare import CaseChange, Comparison
    from ..report.baseline.paired import NoTest, SuiteTest
    from ..report.comment import Base, Links

TOKEN_VARIABLE = "AGENTV_GATE_GITHUB_TOKEN"


@dataclass(frozen=True)
class CommentSetup:
    """What posting needs, taken from the environment before anything runs."""

    key: str
    token: str | None
    env: Mapping[str, str]


def comment_key(env: Mapping[str, str], scope: Sequence[str]) -> str:
    """The workflow's name and the suite set (the eval paths and filters as given), hashed."""
    text = "\0".join([env.get("GITHUB_WORKFLOW", ""), *sorted(scope)])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def comment_setup(scope: Sequence[str], environ: MutableMapping[str, str] | None = None,
                  enabled: bool = True) -> CommentSetup | None:
    """Take the token out of the environment (so the agent under test and its judges never see it,
    whether or not this run comments) and remember it as a secret (so no report can show it);
    None when the run does not comment."""
    environ = os.environ if environ is None else environ
    token = environ.pop(TOKEN_VARIABLE, None) or environ.get("GITHUB_TOKEN") or None
    if not enabled:
        return None
    if token:
        register_secrets([token])
    env = dict(environ)
    return CommentSetup(comment_key(env, scope), token, env)


@dataclass(frozen=True)
class PullRequest:
    number: int
    head_sha: str | None
    base_ref: str | None


def pull_request(env: Mapping[str, str]) -> PullRequest | str:
    """The pull request the event file names, or why there is none to comment on."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return "GITHUB_EVENT_PATH is not set (not a GitHub Actions job)"
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"the event file {path} could not be read ({type(exc).__name__})"
    pr = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pr, dict):
        issue = event.get("issue") if isinstance(event, dict) else None
        if isinstance(issue, dict) and issue.get("pull_request") and isinstance(issue.get("number"), int):
            return PullRequest(issue["number"], None, None)
        name = env.get("GITHUB_EVENT_NAME") or "this"
        return f"the {one_line(name)} event is not a pull request's"
    number = pr.get("number", event.get("number"))
    if not isinstance(number, int) or isinstance(number, bool):
        return "the event file holds no pull request number"
    head, base = pr.get("head"), pr.get("base")
    head_sha = head.get("sha") if isinstance(head, dict) and isinstance(head.get("sha"), str) else None
    base_ref = base.get("ref") if isinstance(base, dict) and isinstance(base.get("ref"), str) else None
    return PullRequest(number, head_sha, base_ref)


def _links(env: Mapping[str, str], head_sha: str | None) -> Links:
    server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    repo = env.get("GITHUB_REPOSITORY", "")
    run = f"{server}/{repo}/actions/runs/{env['GITHUB_RUN_ID']}" if env.get("GITHUB_RUN_ID") and repo else None
    sha = head_sha or env.get("GITHUB_SHA")

    def file(path: str, line: int) -> str | None:
        if not (repo and sha) or path.startswith(("/", "../")):
            return None
        return f"{server}/{repo}/blob/{sha}/{quote(path)}" + (f"#L{line}" if line > 0 else "")

    from ..report.comment import Links

    return Links(run=run, summary=run, report=f"{run}#artifacts" if run else None, file=file)


def base_of(rows: Sequence[CaseResult], name: str | None) -> Base:
    """The base results' branch name, the commit most of its rows judged, and when the latest ran."""
    commits = Counter(r.commit for r in rows if r.commit)
    stamps = sorted(r.timestamp for r in rows if r.timestamp)
    date = stamps[-1][:16].replace("T", " ") + " UTC" if stamps else None
    from ..report.comment import Base

    return Base(name, commits.most_common(1)[0][0] if commits else None, date)


def _warn(message: str, env: Mapping[str, str]) -> None:
    """One line: an annotation under GitHub Actions (it shows on the run's page), else stderr;
    and a line in the job summary, so it is seen where the report is."""
    text = f"the pull-request comment was not posted: {message}"
    if env.get("GITHUB_ACTIONS") == "true":
        print(f"::warning title=agentv-gate comment::{escape_data(text)}", flush=True)
    else:
        print(inert_log_text(f"agentv-gate: warning: {text}"), file=sys.stderr)
    if env.get("GITHUB_STEP_SUMMARY"):
        try:
            append_step_summary(f"\n_agentv-gate: {text.replace('`', '')}._\n", env["GITHUB_STEP_SUMMARY"])
        except Exception:  # noqa: BLE001 - the summary's own write error was said when the report was written
            pass


def post_comment(setup: CommentSetup, results: Sequence[ReportedCase], *, ok: bool, gate_line: str,
                 planned: int | None = None, comparison: Comparison | None = None,
                 base_rows: Sequence[CaseResult] | None = None, usage: UsageTotals | None = None,
                 paired: SuiteTest | NoTest | None = None, unknown: Sequence[CaseChange] = ()) -> bool:
    """Create or update the comment; whatever goes wrong is one warning. Returns whether it was posted.
    `unknown`: the cases the gate fails on because the base never judged them (`Verdict.unknown`)."""
    env = setup.env
    pr = pull_request(env)
    if isinstance(pr, str):
        print(inert_log_text(f"agentv-gate: no pull-request comment: {pr}"), file=sys.stderr)
        return False
    from ..report.comment import Verdict, marker, render_comment
    from ..transport.github import PERMISSION, CommentFault, GitHubApi  # here: `requests` only when commenting

    missing = [name for name in ("GITHUB_REPOSITORY",) if not env.get(name)]
    if missing or not setup.token:
        what = ", ".join(missing) if missing else f"a token (the github-token input, {TOKEN_VARIABLE} or GITHUB_TOKEN)"
        _warn(f"{what} is not set; it needs a token with `{PERMISSION}`", env)
        return False

    api = GitHubApi(env.get("GITHUB_API_URL") or "https://api.github.com", env["GITHUB_REPOSITORY"], setup.token)
    base = base_of(base_rows, pr.base_ref) if base_rows is not None else None
    body = render_comment(results, Verdict(ok, gate_line), key=setup.key, comparison=comparison,
                          base_rows=base_rows, base=base, usage=usage,
                          base_usage=UsageTotals.of(base_rows) if base_rows is not None else None,
                          links=_links(env, pr.head_sha), planned=planned, paired=paired, unknown=unknown)
    try:
        # Ours is the comment the token's own identity wrote whose body starts with the marker: a reply
        # quoting it ("> <!-- ...") is someone else's, and so is anyone's comment that copies the
        # marker (it is computable from the public workflow) to have the gate's report replaced.
        me = api.identity()
        found = next((c for c in api.comments(pr.number)
                      if c.author == me and c.body.startswith(marker(setup.key))), None)
        posted = api.update(found.id, body) if found else api.create(pr.number, body)
    except CommentFault as exc:
        _warn(api.safe(one_line(str(exc))), env)
        return False
    where = f": {posted.url}" if posted.url else ""
    print(inert_log_text(f"agentv-gate: pull-request comment {'updated' if found else 'created'}{one_line(where)}"),
          file=sys.stderr)
    return True


def plain_gate_line(ok: bool, stopped: str | None) -> str:
    """The verdict's line without a base: every case must pass."""
    return f"gate: {'passed' if ok else 'failed'}" + (f" ({stopped})" if stopped else "")


def scope_of(args: Any) -> list[str]:
    """The suite set a command's comment is about: the eval paths and the `--suite`/`--test-id`/`--tag`/
    `--exclude-tag` filters (two gate steps on the same paths but other tags judge other suites: a comment each)."""
    paths = [Path(p).as_posix() for p in (getattr(args, "paths", None) or [])]
    filters = [f"suite={s}" for s in getattr(args, "suite", None) or []]
    filters += [f"test={t}" for t in getattr(args, "test_id", None) or []]
    filters += [f"tag={t}" for t in getattr(args, "tag", None) or []]
    filters += [f"exclude-tag={t}" for t in getattr(args, "exclude_tag", None) or []]
    return paths + filters
