"""`make compat`: AgentV's own examples, run by the real AgentV and by agentv-gate, compared case by case.

Generic over the AgentV version (`--agentv 2.19.0`; a 4.x run needs only its row reader added):

1. installs AgentV from `../shared/agentv/<version>` into `~/.cache/agentv-gate-compat/agentv-<version>`
   (once; `npm install` from its lock file) and `bun` from npm beside it, for the TypeScript judges;
2. copies `../shared/agentv/examples-<version>` to a temporary folder (a git repository, so both tools
   find the same root), with `@agentv/eval` (the SDK's TypeScript source), `zod` and `yaml` under its
   node_modules, a `uv` shim (`uv run x.py` is `python3 x.py`) and bun on PATH;
3. starts the deterministic loopback model (`fake_llm.py`) and points every LLM target at it (the
   gemini ones too: see PATCHES and GEMINI_REDIRECT);
4. runs each eval file with both tools and compares per case: score, verdict, hits, misses, error state
   and JUnit names. A suite AgentV cannot run here (a real agent CLI, the network) is listed as skipped
   with AgentV's own error as the reason, never dropped.

It prints a table (suite, cases, identical, differing, refused, AgentV-only), writes the full diff to
`--out/diff.txt`, and with `--record DIR` writes AgentV's results (`expected.json`, the facts
tests/compat/test_agentv_examples.py replays against the gate without node).
AgentV's files are read from ../shared and copied only to the temporary folder, never into the project.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from compat.fake_llm import FakeModel  # noqa: E402
from compat.known import DELIBERATE_JUNIT, DIFFERING, ERROR_TEXT, REFUSED, same_misses  # noqa: E402

CACHE = Path(os.environ.get("AGENTV_COMPAT_CACHE", Path.home() / ".cache" / "agentv-gate-compat"))
SUITE_NAMES = ("*.eval.yaml", "EVAL.yaml")
SUITE_TIMEOUT = 300
NEEDS_A_REAL_AGENT = ("codex", "claude", "copilot", "vscode", "pi-coding-agent", "pi-agent-sdk")
GEMINI_HOST = "https://generativelanguage.googleapis.com"
PATCHES: dict[str, list[tuple[str, str, str, str]]] = {
    # (file, a line's start, what replaces the line ("": dropped), why)
    "2.19.0": [
        *((f"{tree}/.agentv/targets.yaml", "    workspace_template:", "",
           f"AgentV 2.19 refuses its own {tree}/.agentv/targets.yaml: 'target-level workspace_template has "
           "been removed' (on vscode targets no suite run here uses)") for tree in ("features", "showcase")),
        *((f"{tree}/.agentv/targets.yaml", "    provider: gemini",
           "    provider: gemini\n    base_url: ${{ AGENTV_COMPAT_GEMINI_URL }}\n",
           "the gemini targets answer from the loopback model: agentv-gate reads base_url; AgentV 2.19 has no "
           f"such setting (its schema passes it through unread), so its calls to {GEMINI_HOST} are sent to "
           "the same model by a fetch wrapper node loads first (NODE_OPTIONS)") for tree in ("features", "showcase")),
    ],
}

GEMINI_REDIRECT = """// `make compat`: AgentV's gemini provider calls Google's host, which it cannot be told to change;
// this sends those calls to the loopback model (AGENTV_COMPAT_GEMINI_URL), as agentv-gate's base_url does.
const host = "HOST";
const moved = process.env.AGENTV_COMPAT_GEMINI_URL;
const original = globalThis.fetch;
if (moved && original) {
  globalThis.fetch = (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(host)) return original(input, init);
    const target = moved + url.slice(host.length);
    return typeof input === "string" || input instanceof URL ? original(target, init)
                                                             : original(new Request(target, input), init);
  };
}
""".replace('"HOST"', json.dumps(GEMINI_HOST))


# ----------------------------------------------------------------------------- environment


def shared_root() -> Path:
    return Path(os.environ.get("AGENTV_SHARED", REPO.parent / "shared" / "agentv")).resolve()


def install_agentv(version: str) -> Path:
    """AgentV's CLI, installed once under the cache from the shared package and its lock file."""
    home = CACHE / f"agentv-{version}"
    cli = home / "node_modules" / ".bin" / "agentv"
    if cli.exists():
        return cli
    shared = Path(f"/tmp/av{version.split('.')[0]}") / "node_modules" / ".bin" / "agentv"  # the shared README's
    if shared.exists() and subprocess.run([str(shared), "--version"], capture_output=True, text=True, check=False,
                                          env={**os.environ, "AGENTV_NO_UPDATE_CHECK": "1"}).stdout.strip() == version:
        return shared
    home.mkdir(parents=True, exist_ok=True)
    for item in (shared_root() / version).iterdir():
        shutil.copy2(item, home / item.name)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=home, check=True)
    return cli


def install_bun() -> Path | None:
    """bun from npm (AgentV runs the examples' TypeScript judges with it), once; None when npm cannot."""
    if shutil.which("bun"):
        return Path(str(shutil.which("bun"))).parent
    home = CACHE / "bun"
    binary = home / "node_modules" / ".bin" / "bun"
    if not binary.exists() and shutil.which("npm"):
        home.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "bun"], cwd=home, check=False)
    return binary.parent if binary.exists() else None


UV_SHIM = """#!/bin/sh
# `uv run script.py args`: the examples' way to run a Python judge; here python3 runs it.
[ "$1" = run ] && shift
case "$1" in *.py) exec python3 "$@";; esac
exec "$@"
"""


def prepare_tree(version: str, agentv_cli: Path | None, work: Path) -> tuple[Path, list[str]]:
    """The examples copied to `work/ex` (a git repository), with the SDK and shims; returns it and the notes
    of what was changed in the copy."""
    examples = shared_root() / f"examples-{version}"
    tree = work / "ex"
    shutil.copytree(examples, tree, ignore=shutil.ignore_patterns("node_modules"))
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    notes = []
    if version.startswith("2."):
        # The tree says which AgentV it is written for, as a 2.19 team's repository would (docs/compatibility.md).
        gate = tree / ".agentv" / "gate.yaml"
        gate.parent.mkdir(exist_ok=True)
        gate.write_text(f'agentv:\n  version: "{version}"\n')
        notes.append(f".agentv/gate.yaml: written in the copy (agentv: {{version: {version}}}): the examples "
                     "are 2.19's")
    for rel, prefix, replacement, why in PATCHES.get(version, []):
        target = tree / rel
        if target.exists():
            kept = [replacement if line.startswith(prefix) else line
                    for line in target.read_text().splitlines(keepends=True)]
            target.write_text("".join(kept))
            done = f"replaced by {replacement.strip()!r}" if replacement else "dropped"
            notes.append(f"{rel}: lines starting {prefix.strip()!r} {done} in the copy: {why}")
    sdk = shared_root() / f"src-{version}" / "packages" / "eval" / "src"
    modules = tree / "node_modules"
    if sdk.is_dir():
        package = modules / "@agentv" / "eval"
        shutil.copytree(sdk, package / "src")
        (package / "package.json").write_text(json.dumps({"name": "@agentv/eval", "type": "module",
                                                          "main": "src/index.ts", "exports": "./src/index.ts"}))
    if agentv_cli is not None:
        # What the examples import from AgentV's monorepo root without declaring it (zod: the SDK;
        # yaml: batch-cli's runner), taken from AgentV's own install.
        for package in ("zod", "yaml"):
            installed = agentv_cli.parents[1] / package
            if installed.is_dir():
                (modules / package).symlink_to(installed)
    shims = work / "shims"
    shims.mkdir()
    (shims / "uv").write_text(UV_SHIM)
    (shims / "uv").chmod(0o755)
    (shims / "gemini-redirect.mjs").write_text(GEMINI_REDIRECT)
    return tree, notes


def environment(work: Path, model_url: str, bun: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "ANTHROPIC_", "GEMINI_",
                                                                     "GOOGLE_", "AGENTV_GATE_"))}
    path = [str(work / "shims"), *([str(bun)] if bun else []), env.get("PATH", "")]
    env.update({"PATH": os.pathsep.join(path), "AGENTV_NO_UPDATE_CHECK": "1",
                "AZURE_OPENAI_ENDPOINT": model_url, "AZURE_OPENAI_API_KEY": "fake-key",
                "AZURE_DEPLOYMENT_NAME": "fake-model", "AZURE_OPENAI_API_VERSION": "2024-12-01-preview",
                "GOOGLE_GENERATIVE_AI_API_KEY": "fake-key", "GEMINI_MODEL_NAME": "fake-gemini",
                "AGENTV_COMPAT_GEMINI_URL": model_url, "NO_COLOR": "1"})
    return env


def agentv_environment(work: Path, env: dict[str, str]) -> dict[str, str]:
    """`environment` for AgentV's node process: with the gemini redirect loaded first (bun, which runs
    the judges, does not read NODE_OPTIONS; agentv-gate never sees it), and a HOME of its own in the
    temporary folder. AgentV keeps state under ~/.agentv between runs: a pooled workspace's slots
    (~/.agentv/workspace-pool) outlive a failed `git clone`, so a later run reused a slot without the
    repository and scored a suite that a clean AgentV cannot run offline. A fresh HOME each run makes
    the recording what AgentV does on a fresh machine, and leaves the user's ~/.agentv alone."""
    redirect = (work / "shims" / "gemini-redirect.mjs").as_uri()
    home = work / "agentv-home"
    home.mkdir(exist_ok=True)
    return {**env, "HOME": str(home),
            "NODE_OPTIONS": f"{env.get('NODE_OPTIONS', '')} --import={redirect}".strip()}


# ----------------------------------------------------------------------------- running


@dataclass
class Case:
    score: float | None = None
    verdict: str = ""
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    error: bool = False
    junit: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"score": self.score, "verdict": self.verdict, "hits": self.hits, "misses": self.misses,
                "error": self.error, "junit": self.junit}


@dataclass
class SuiteRun:
    cases: dict[str, Case] = field(default_factory=dict)
    refused: str = ""
    log: str = ""


def _junit(path: Path) -> dict[str, tuple[str, str]]:
    """case name -> (JUnit name as `classname/name`, verdict from the element)."""
    if not path.exists():
        return {}
    found = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        verdict = "error" if case.find("error") is not None else "fail" if case.find("failure") is not None else "pass"
        found[case.get("name", "")] = (f"{case.get('classname', '')}/{case.get('name', '')}", verdict)
    return found


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _rounded(value: Any) -> float | None:
    return round(float(value), 6) if isinstance(value, (int, float)) else None


def run_agentv(cli: Path, suite: Path, tree: Path, out: Path, env: dict[str, str]) -> SuiteRun:
    out.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run([str(cli), "eval", str(suite), "--out", str(out / "results.jsonl"),
                               "-o", str(out / "results.xml")], cwd=tree, env=env, capture_output=True,
                              text=True, timeout=SUITE_TIMEOUT)
        log = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        return SuiteRun(refused=f"AgentV did not finish in {SUITE_TIMEOUT} s")
    junit = _junit(out / "results.xml")
    run = SuiteRun(log=log)
    for row in _rows(out / "results.jsonl"):
        name = str(row.get("test_id") or row.get("eval_id"))
        key = name if name not in run.cases else f"{name}@{row.get('target')}"
        junit_name, verdict = junit.get(name, ("", ""))
        failed = row.get("execution_status") == "execution_error"  # quality_failure is a scored case
        run.cases[key] = Case(_rounded(row.get("score")), "error" if failed else verdict, list(row.get("hits") or []),
                              list(row.get("misses") or []), failed, junit_name)
    if not run.cases:
        run.refused = _last_error(log)
    return run


def _last_error(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    picked = [line for line in lines if "rror" in line or "✗" in line]
    return (picked or lines or ["no output"])[0][:300]


def run_gate(suite: Path, tree: Path, out: Path, env: dict[str, str]) -> SuiteRun:
    out.mkdir(parents=True, exist_ok=True)
    gate = [sys.executable, "-m", "agentv_gate"]
    proc = subprocess.run([*gate, "run", str(suite), "--no-cache", "--output-dir", str(out), "--quiet"],
                          cwd=tree, env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=SUITE_TIMEOUT)
    log = proc.stdout + proc.stderr
    if proc.returncode not in (0, 1):
        return SuiteRun(refused=_last_error(log.replace("agentv-gate: ", "")), log=log)
    junit = _junit(out / "junit.xml")
    run = SuiteRun(log=log)
    for row in _rows(out / "results.jsonl"):
        name = str(row.get("eval_id"))
        key = name if name not in run.cases else f"{name}@{row.get('target')}"
        junit_name = next((n for case, (n, _) in junit.items() if case == name or case.startswith(f"{name} [")), "")
        run.cases[key] = Case(_rounded(row.get("score")), str(row.get("verdict")), list(row.get("hits") or []),
                              list(row.get("misses") or []), row.get("verdict") == "error", junit_name)
    return run


def needs_a_real_agent(suite: Path, tree: Path) -> str | None:
    """A reason to skip a suite whose targets are agent CLIs (codex, claude, ...), without starting them."""
    text = suite.read_text(errors="replace")
    for folder in [suite.parent, *suite.parents]:
        targets = folder / ".agentv" / "targets.yaml"
        if targets.exists():
            break
        if folder == tree:
            return None
    else:
        return None
    import yaml  # a runtime dependency of the gate

    data = yaml.safe_load(targets.read_text()) or {}
    providers = {t.get("name"): str(t.get("provider", "")) for t in data.get("targets", []) if isinstance(t, dict)}
    named = [name for name in providers if name and (f"target: {name}" in text or f"- {name}" in text)]
    for name in named or ["default"]:
        provider = providers.get(name, "")
        if provider.lower().startswith(NEEDS_A_REAL_AGENT):
            return f"target '{name}' is the {provider} agent CLI (not on this machine)"
    return None


# ----------------------------------------------------------------------------- comparing


def compare(av: SuiteRun, gate: SuiteRun) -> tuple[dict[str, str], list[str]]:
    """Each AgentV case's state (identical, differing, refused, agentv-only) and the diff lines."""
    states: dict[str, str] = {}
    diff: list[str] = []
    for name, ours in av.cases.items():
        if gate.refused:
            states[name] = "refused"
            continue
        theirs = gate.cases.get(name)
        if theirs is None:
            states[name] = "agentv-only"
            diff.append(f"  {name}: only AgentV ran it")
            continue
        if theirs.junit != ours.junit and theirs.junit.split(" [")[0] == ours.junit:
            diff.append(f"  {name}: junit {theirs.junit!r} (deliberate: {DELIBERATE_JUNIT})")
            theirs.junit = ours.junit
        if ours.misses != theirs.misses and same_misses(ours.error, theirs.error, ours.misses, theirs.misses):
            diff.append(f"  {name}: misses worded apart (deliberate: {ERROR_TEXT})")
            theirs.misses = ours.misses
        lines = [f"    {key}: AgentV {getattr(ours, key)!r} | gate {getattr(theirs, key)!r}"
                 for key in ("score", "verdict", "hits", "misses", "error", "junit")
                 if getattr(ours, key) != getattr(theirs, key)]
        states[name] = "differing" if lines else "identical"
        if lines:
            diff.extend([f"  {name}:", *lines])
    return states, diff


def example_folder(suite: Path) -> Path:
    """The example a suite belongs to: the folder above its `evals/`, else its own folder."""
    return suite.parent.parent if suite.parent.name == "evals" else suite.parent


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def folder_hash(folder: Path) -> str:
    """The hash of every file under an example's folder (its suites, judges, agents, targets)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "node_modules" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agentv", default="2.19.0", help="AgentV version under ../shared/agentv")
    parser.add_argument("--out", type=Path, default=REPO / "compat" / "out")
    parser.add_argument("--record", type=Path, default=None, help="write AgentV's results here (expected.json)")
    parser.add_argument("--only", action="append", default=None, help="run suites whose path contains this")
    args = parser.parse_args()
    args.out = args.out.resolve()  # AgentV runs in the examples' copy: a relative --out would be read there
    if not shared_root().is_dir():
        print(f"compat: {shared_root()} is missing: nothing to compare against", file=sys.stderr)
        return 2
    cli = install_agentv(args.agentv)
    bun = install_bun()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    rows: list[tuple[str, int, int, int, int, int, str]] = []
    diff: list[str] = []
    record: dict[str, Any] = {"agentv_version": args.agentv, "suites": {}}
    with tempfile.TemporaryDirectory(prefix="agentv-compat-") as tmp, FakeModel() as model:
        work = Path(tmp)
        tree, notes = prepare_tree(args.agentv, cli, work)
        env = environment(work, model.url, bun)
        record["notes"] = notes
        suites = sorted({p for pattern in SUITE_NAMES for p in tree.rglob(pattern) if "node_modules" not in p.parts})
        # Hashed as shipped, never the copy: a run may write into its example (batch-cli's CSV).
        pristine = shared_root() / f"examples-{args.agentv}"
        for suite in suites:
            rel = str(suite.relative_to(tree))
            if args.only and not any(part in rel for part in args.only):
                continue
            slug = rel.replace("/", "__")
            skip = needs_a_real_agent(suite, tree)
            if skip is None:
                av = run_agentv(cli, suite, tree, args.out / "agentv" / slug, agentv_environment(work, env))
                if av.refused:
                    skip = f"AgentV: {av.refused}"
            if skip is not None:
                skip = skip.replace(f"{tree}/", "").replace(f"{work}/", "")  # the temporary folder says nothing
                rows.append((rel, 0, 0, 0, 0, 0, skip))
                record["suites"][rel] = {"skipped": skip}
                continue
            gate = run_gate(suite, tree, args.out / "gate" / slug, env)
            states, lines = compare(av, gate)
            counts = [sum(1 for s in states.values() if s == kind)
                      for kind in ("identical", "differing", "refused", "agentv-only")]
            rows.append((rel, len(states), *counts, REFUSED.get(rel) or DIFFERING.get(rel) or gate.refused))
            if lines or gate.refused:
                diff.append(f"{rel}:" + (f" refused by the gate: {gate.refused}" if gate.refused else ""))
                diff.extend(lines)
            record["suites"][rel] = {"example_hash": folder_hash(example_folder(pristine / rel)),
                                     "suite_hash": file_hash(suite),
                                     "needs_bun": "bun" in suite.read_text(errors="replace"),
                                     "cases": {name: case.as_dict() for name, case in av.cases.items()}}
    header = ("suite", "cases", "identical", "differing", "refused", "AgentV-only", "note")
    table = [header, *[tuple(str(v) for v in row) for row in rows]]
    totals = [sum(row[i] for row in rows) for i in range(1, 6)]
    table.append(("total", *map(str, totals), ""))
    text = "\n".join("| " + " | ".join(cells) + " |" for cells in table)
    print(text)
    (args.out / "table.md").write_text(text + "\n")
    (args.out / "diff.txt").write_text("\n".join(diff) + "\n")
    print(f"\nfull diff: {args.out / 'diff.txt'}")
    if args.record is not None:
        args.record.mkdir(parents=True, exist_ok=True)
        (args.record / "expected.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        print(f"recorded AgentV's results: {args.record / 'expected.json'}")
    return 0 if not any(totals[2:]) else 1  # nothing differing, refused or AgentV-only


if __name__ == "__main__":
    sys.exit(main())
