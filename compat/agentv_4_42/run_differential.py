"""The AgentV 4.42.4 differential: its own examples, run by the real AgentV 4.42.4 and by agentv-gate, per case.

    python compat/agentv_4_42/run_differential.py [--record] [--only GLOB] [--agentv PATH/TO/agentv]

1. AgentV 4.42.4 from `../shared/agentv/4.42.4` (npm, its lock file), installed once under
   `~/.cache/agentv-gate-compat/agentv-4.42.4` unless `--agentv` names an installed CLI; `bun` from npm
   beside it, for the TypeScript graders;
2. the examples are copied to a temporary git repository with `sdk_shim/` as `@agentv/sdk` and
   `@agentv/eval` under its node_modules (AgentV's SDK package is not on the npm registry here) and a
   `uv` shim (`uv run x.py` is `python3 x.py`);
3. every target an eval file (or the case file its `tests:` names) uses and its folder's targets.yaml does not
   define is the loopback `fake_model.py` (OpenAI chat completions), `grader` included, and an `openai` target
   that targets.yaml defines is pointed at it too, so LLM targets and graders run offline;
4. each eval file that validates in agentv-gate is run by both tools; the gate with `--threshold 0.8`,
   AgentV 4.42's own pass mark (its CLI default, which a file's threshold overrides in both tools);
5. per case: the score (to 6 places) and the verdict (pass or not) must be identical. A case only one tool
   ran, or a file AgentV could not run here (a real agent CLI, the network), is listed with the reason.

With `--record`, AgentV's per-case results, its version and a hash of each file's inputs go to
`tests/compat/agentv-4.42/expected.json`, which tests/compat/test_agentv_442_replay.py replays against the
gate without node. AgentV's files are read from ../shared and copied only to the temporary folder.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from compat.agentv_4_42.fake_model import FakeModel  # noqa: E402

VERSION = "4.42.4"
EXPECTED = REPO / "tests" / "compat" / "agentv-4.42" / "expected.json"
GATE = Path(sys.executable).parent / "agentv-gate"
EVAL_FILE = re.compile(r"(^|/|\.)eval\.(yaml|yml|jsonl)$", re.IGNORECASE)
UV_SHIM = '#!/bin/sh\n# `uv run X ARGS` as `python3 X ARGS` (uv is not installed here)\n[ "$1" = run ] && shift\n' \
          'case "$1" in *.py) exec python3 "$@";; esac\nexec "$@"\n'
PASS_MARK = "0.8"
"""AgentV 4.42's DEFAULT_THRESHOLD, given to the gate so a file without its own threshold is judged alike."""
SUITE_TIMEOUT = 300

KNOWN_DIFFERENCES = {
    "contract/evals/code-grader-contract.eval.yaml":
        "its grader reads readFileSync('/dev/stdin'); AgentV 4.42 run by node hands a grader its payload through a "
        "socket pair (child_process 'pipe'), which /dev/stdin cannot open (ENXIO), so AgentV scores 0 here; the "
        "gate's pipe opens, and the grader finds every 4.x payload key it checks (7 of 8 pass: the loopback "
        "model's answer lacks the two tokens it asks for)",
}
"""Eval files whose cases differ for a reason outside the gate's reading of them: listed with it, never recorded."""


def shared_root() -> Path:
    return REPO.parent / "shared" / "agentv"


def install_agentv() -> Path:
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "agentv-gate-compat" / f"agentv-{VERSION}"
    cli = home / "node_modules" / ".bin" / "agentv"
    if not cli.exists():
        shutil.copytree(shared_root() / VERSION, home, dirs_exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=home, check=True)
    return cli


def find_bun(agentv_cli: Path) -> Path | None:
    on_path = shutil.which("bun")
    if on_path:
        return Path(on_path).parent
    home = agentv_cli.parents[2]
    if not (home / "node_modules" / ".bin" / "bun").exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--no-save", "bun"], cwd=home, check=False)
    bun = home / "node_modules" / ".bin" / "bun"
    return bun.parent if bun.exists() else None


def eval_files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and EVAL_FILE.search(p.relative_to(tree).as_posix())
                  and "node_modules" not in p.parts)


def prepare_tree(work: Path) -> Path:
    tree = work / "ex"
    shutil.copytree(shared_root() / f"examples-{VERSION}", tree, ignore=shutil.ignore_patterns("node_modules"))
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    for name in ("sdk", "eval"):
        package = tree / "node_modules" / "@agentv" / name
        shutil.copytree(HERE / "sdk_shim", package)
        (package / "package.json").write_text(json.dumps({"name": f"@agentv/{name}", "type": "module",
                                                          "main": "index.js", "exports": "./index.js"}))
    shims = work / "shims"
    shims.mkdir()
    (shims / "uv").write_text(UV_SHIM)
    (shims / "uv").chmod(0o755)
    return tree


def environment(work: Path, model_url: str, bun: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "ANTHROPIC_", "GEMINI_",
                                                                     "GOOGLE_", "AGENTV_"))}
    env.update({"PATH": os.pathsep.join([str(work / "shims"), *([str(bun)] if bun else []), env.get("PATH", "")]),
                "AGENTV_NO_UPDATE_CHECK": "1", "NO_COLOR": "1", "OPENAI_API_KEY": "fake-key",
                "FAKE_MODEL_URL": model_url, "FAKE_MODEL_NAME": "fake-model"})
    return env


def _names(value: Any, out: set[str]) -> None:
    """Every target name an eval file writes (`target`, `targets`, `grader_target`), at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("target", "grader_target", "judge_target") and isinstance(item, str):
                out.add(item)
            elif key == "targets" and isinstance(item, list):
                out.update(t for t in item if isinstance(t, str))
                out.update(t["name"] for t in item if isinstance(t, dict) and isinstance(t.get("name"), str))
            else:
                _names(item, out)
    elif isinstance(value, list):
        for item in value:
            _names(item, out)


def _suite_documents(suite: Path) -> list[Any]:
    """The suite and the case file its `tests:` names (`tests: ./dataset.jsonl`), each case of a JSONL file one
    document: where the target names it uses are written."""
    def read(path: Path) -> list[Any]:
        try:
            text = path.read_text()
            if path.suffix == ".jsonl":
                return [json.loads(line) for line in text.splitlines() if line.strip()]
            return [yaml.safe_load(text)]
        except (OSError, ValueError, yaml.YAMLError):
            return []
    documents = read(suite)
    tests = documents[0].get("tests") if documents and isinstance(documents[0], dict) else None
    if isinstance(tests, str) and (suite.parent / tests.removeprefix("file://")).is_file():
        documents.extend(read(suite.parent / tests.removeprefix("file://")))
    return documents


def targets_for(suite: Path, tree: Path, out: Path) -> Path:
    """The suite's folder's targets.yaml (nearest `.agentv/` up to the tree) plus the fake model for every
    other name the suite or those targets use, and `grader`, `llm` and `default`."""
    own: list[dict[str, Any]] = []
    for folder in [suite.parent, *suite.parent.parents]:
        found = folder / ".agentv" / "targets.yaml"
        if found.is_file():
            own = (yaml.safe_load(found.read_text()) or {}).get("targets") or []
            for target in own:  # a cli target's relative cwd is relative to its targets file's folder
                if target.get("provider") == "cli":
                    target.setdefault("cwd", str(found.parent.parent))
                    if not Path(str(target["cwd"])).is_absolute():
                        target["cwd"] = str((found.parent / str(target["cwd"])).resolve())
            break
        if folder == tree:
            break
    wanted: set[str] = {"grader", "llm", "default"}
    for document in _suite_documents(suite):
        _names(document, wanted)
    _names({"targets": own}, wanted)
    for target in own:
        for key in ("grader_target", "judge_target"):
            if isinstance(target.get(key), str):
                wanted.add(target[key])
    for target in own:  # an LLM target of its own would call the network: the fake model answers for it
        if target.get("provider") == "openai":
            target.update({"base_url": "${{ FAKE_MODEL_URL }}", "api_key": "${{ OPENAI_API_KEY }}",
                           "model": "${{ FAKE_MODEL_NAME }}"})
    defined = {t.get("name") for t in own}
    fake = [{"name": name, "provider": "openai", "base_url": "${{ FAKE_MODEL_URL }}", "api_key": "${{ OPENAI_API_KEY }}",
             "model": "${{ FAKE_MODEL_NAME }}", **({} if name == "grader" else {"grader_target": "grader"})}
            for name in sorted(wanted - defined)]
    path = out / "targets.yaml"
    path.write_text(yaml.safe_dump({"targets": [*own, *fake]}, sort_keys=False))
    return path


def _rounded(value: Any) -> float | None:
    return round(float(value), 6) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def agentv_rows(out: Path) -> dict[str, dict[str, Any]]:
    """AgentV 4.42's `index.jsonl` (completion order) as test id -> {score (6 places), passed, error}."""
    rows: dict[str, dict[str, Any]] = {}
    for path in out.rglob("index.jsonl"):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            case = row.get("test_id") or row.get("eval_id") or row.get("id")
            if not isinstance(case, str):
                continue
            # 4.42's verdict is its execution_status: ok (passed its threshold), quality_failure, execution_error
            status = row.get("execution_status")
            rows[case] = {"score": _rounded(row.get("score")), "passed": status == "ok",
                          "error": status == "execution_error"}
    return rows


def gate_rows(results: Path) -> dict[str, dict[str, Any]]:
    """agentv-gate's results.jsonl as test id -> {score (6 places), passed, error}."""
    if not results.is_file():
        return {}
    return gate_rows_of([json.loads(line) for line in results.read_text().splitlines() if line.strip()])


def gate_rows_of(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["eval_id"]: {"score": _rounded(row.get("score")), "passed": row.get("verdict") == "pass",
                             "error": row.get("verdict") == "error"} for row in rows}


def run(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> int:
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=SUITE_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        log.write_text("timed out")
        return -1
    log.write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    return proc.returncode


def inputs_hash(suite: Path) -> str:
    """The eval file and every file beside it in its example's folder: what a recorded result depends on."""
    digest = hashlib.sha256()
    root = suite.parent.parent if suite.parent.name in ("evals", "suites") else suite.parent
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "node_modules" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agentv", type=Path, default=None, help="an installed AgentV 4.42.4 CLI")
    parser.add_argument("--only", default=None, help="eval files whose path matches GLOB")
    parser.add_argument("--record", action="store_true", help=f"write {EXPECTED.relative_to(REPO)}")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    cli = args.agentv or install_agentv()
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    bun = find_bun(cli)
    work = Path(tempfile.mkdtemp(prefix="agentv442-"))
    tree = prepare_tree(work)
    recorded: dict[str, Any] = {"agentv": version, "pass_mark": float(PASS_MARK), "suites": {}}
    identical = differing = 0
    lines: list[str] = []
    with FakeModel() as model:
        env = environment(work, model.url, bun)
        for suite in eval_files(tree):
            rel = suite.relative_to(tree).as_posix()
            if args.only and not fnmatch.fnmatch(rel, args.only):
                continue
            out = work / "out" / rel.replace("/", "__")
            out.mkdir(parents=True)
            targets = targets_for(suite, tree, out)
            check = run([str(GATE), "validate", str(suite), "--targets", str(targets)], tree, env, out / "validate.log")
            if check != 0:
                lines.append(f"REFUSED  {rel}: {_first_problem(out / 'validate.log')}")
                continue
            run([str(cli), "eval", str(suite), "-o", str(out / "av"), "--targets", str(targets)], tree, env,
                out / "agentv.log")
            run([str(GATE), "run", str(suite), "--targets", str(targets), "--output-dir", str(out / "gate"),
                 "--no-cache", "--threshold", PASS_MARK, "-q"], tree, env, out / "gate.log")
            av, gate = agentv_rows(out / "av"), gate_rows(out / "gate" / "results.jsonl")
            if not av:
                lines.append(f"SKIPPED  {rel}: AgentV ran no case here ({_last_line(out / 'agentv.log')})")
                continue
            cases: dict[str, Any] = {}
            for case in sorted(set(av) | set(gate)):
                a, g = av.get(case), gate.get(case)
                if a is None or g is None:
                    lines.append(f"ONE-SIDE {rel} {case}: only {'AgentV' if g is None else 'agentv-gate'} ran it")
                    continue
                same = a["score"] == g["score"] and a["passed"] == g["passed"]
                if not same and rel in KNOWN_DIFFERENCES:
                    lines.append(f"KNOWN    {rel} {case}: AgentV {a['score']}, agentv-gate {g['score']}: "
                                 f"{KNOWN_DIFFERENCES[rel]}")
                    continue
                identical += same
                differing += not same
                if not same:
                    lines.append(f"DIFFERS  {rel} {case}: AgentV {a['score']} {'pass' if a['passed'] else 'fail'}, "
                                 f"agentv-gate {g['score']} {'pass' if g['passed'] else 'fail'}")
                cases[case] = {"score": a["score"], "passed": a["passed"]}
            if cases:
                recorded["suites"][rel] = {"inputs_sha256": inputs_hash(suite), "cases": cases}
                lines.append(f"RAN      {rel}: {len(cases)} case(s)")
    print("\n".join(lines))
    print(f"\nAgentV {version}: {len(recorded['suites'])} eval file(s) ran in both; {identical} case(s) identical, "
          f"{differing} differing. Logs: {work}/out")
    if args.record:
        EXPECTED.parent.mkdir(parents=True, exist_ok=True)
        EXPECTED.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        print(f"recorded {EXPECTED.relative_to(REPO)}")
    if not args.keep and not differing:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if differing else 0


def _first_problem(log: Path) -> str:
    for line in log.read_text().splitlines():
        if ": " in line and not line.startswith("agentv-gate:"):
            return line.split(": ", 1)[1][:160]
    return _last_line(log)


def _last_line(log: Path) -> str:
    text = [line for line in log.read_text().splitlines() if line.strip() and line != "--- stderr ---"]
    return text[-1][:160] if text else "no output"


if __name__ == "__main__":
    raise SystemExit(main())
