"""The AgentV 4.42.4 differential: its own examples, run by the real AgentV 4.42.4 and by agentv-gate, per case.

    python compat/agentv_4_42/run_differential.py [--record] [--only GLOB] [--agentv PATH/TO/agentv] [--keep]

1. AgentV 4.42.4: `--agentv`, else the one cached under `~/.cache/agentv-gate-compat/agentv-4.42.4`, else
   `/tmp/av4` (the shared README's install) when it is 4.42.4, else installed into the cache from
   `../shared/agentv/4.42.4` (npm, its lock file); `bun` from npm beside it, for the TypeScript graders;
2. the examples are copied to a temporary git repository with AgentV's repository-root `.agentv/`
   (`../shared/agentv/root-agentv-4.42.4`, as AgentV's checkout has it), `sdk_shim/` as `@agentv/sdk` and
   `@agentv/eval` under its node_modules (AgentV's SDK package is not on the npm registry here) and a
   `uv` shim (`uv run x.py` is `python3 x.py`);
3. each eval file gets one targets file, given to both tools: its nearest `.agentv/targets.yaml` (the root one
   for most), its LLM targets answered by the loopback `fake_model.py` (OpenAI chat completions), its
   `use_target` switches (`default`, `agent`, `llm`, `grader`) kept and pointed by AGENT_TARGET, LLM_TARGET and
   GRADER_TARGET at loopback targets of their own, and that model for every other name the suite uses;
4. both tools run each file exactly as a user would, each with its own defaults: no flag goes to one side only
   (a `--threshold` given to the gate alone once hid 40 wrong PASSes). AgentV runs every file; the gate runs
   those it validates, and a file it refuses that AgentV ran offline is counted, with the refusal;
5. per case: score (6 places), verdict (AgentV's ok / quality_failure / execution_error as pass / fail /
   error), error state, evaluator names and types and assertion texts (hits and misses) are compared. The
   summary counts files run by both, cases, same score, same verdict, AgentV-fail/gate-pass (wrong PASSes),
   gate-fail/AgentV-pass, and files AgentV runs offline that the gate refuses. Exit 1 unless every verdict is
   the same, there is no wrong PASS and no such refusal.

With `--record`, AgentV's per-case results (score, verdict), its version and a hash of each file's inputs go to
`tests/compat/agentv-4.42/expected.json`, which tests/compat/test_agentv_442_replay.py replays against the
gate without node, beside `known-differences.json` (each remaining difference with its cause). `--reuse DIR`
compares (and records) what a `--keep` run left in DIR; with `--rerun-gate` the gate runs again there (after a
fix), AgentV's kept results unchanged. AgentV's files are read from ../shared and copied
only to the temporary folder.
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
KNOWN = EXPECTED.with_name("known-differences.json")
GATE = Path(sys.executable).parent / "agentv-gate"
EVAL_FILE = re.compile(r"(^|/|\.)eval\.(yaml|yml|jsonl)$", re.IGNORECASE)
UV_SHIM = '#!/bin/sh\n# `uv run X ARGS` as `python3 X ARGS` (uv is not installed here)\n[ "$1" = run ] && shift\n' \
          'case "$1" in *.py) exec python3 "$@";; esac\nexec "$@"\n'
SUITE_TIMEOUT = 300
LLM_PROVIDERS = {"azure", "azure-openai", "gemini", "google", "openrouter", "anthropic"}
"""Providers that call a model's HTTP API: the loopback model stands in for each (openai is re-pointed in place)."""

KNOWN_DIFFERENCES = {
    "contract/evals/code-grader-contract.eval.yaml":
        "its grader reads readFileSync('/dev/stdin'); AgentV 4.42 run by node hands a grader its payload through a "
        "socket pair (child_process 'pipe'), which /dev/stdin cannot open (ENXIO), so AgentV scores 0 here; the "
        "gate's pipe opens, and the grader finds every 4.x payload key it checks (7 of 8 pass: the loopback "
        "model's answer lacks the two tokens it asks for)",
}
"""Eval files whose cases differ for a reason outside the gate's reading of them: listed with it, never recorded."""

EVIDENCE = ("the gate writes a 4.x assertion that has evidence as `text: evidence` in its hits and misses (the judge's "
            "or grader's reasoning); AgentV 4.42 keeps the text alone and the evidence in assertions[].evidence: the "
            "same assertions and verdicts, written differently")
TEXT_CAUSES: dict[str, str] = {
    **dict.fromkeys(("features/autoresearch/EVAL.yaml", "features/default-graders/evals/dataset.eval.yaml",
                     "features/experiments/evals/coding-ability.eval.yaml", "features/rubric/evals/dataset.eval.yaml",
                     "features/rubric/evals/operators.eval.yaml", "features/nlp-metrics/evals/dataset.eval.yaml",
                     "red-team/archetypes/coding-agent/suites/screenshot-pii-upload.eval.yaml",
                     "showcase/export-screening/evals/dataset.eval.yaml",
                     "showcase/tool-evaluation-plugins/tool-eval-demo.eval.yaml"), EVIDENCE),
    "features/composite/evals/dataset.eval.yaml":
        f"code-grader-safety-gate: {EVIDENCE}; llm-grader-conflict-resolution: AgentV 4.42 sends its aggregator's "
        "prompt path itself (`../prompts/conflict-resolution.md`) as the prompt, the gate the file's text (a "
        "documented deliberate difference), so the loopback judge answers otherwise ('fake pass' / 'fake hit')",
    "features/threshold-grader/evals/dataset.eval.yaml":
        f"{EVIDENCE}; and its composite's `type: rubrics` members are reported as `llm-judge` where AgentV 4.42 "
        "writes `llm-grader` (a member is parsed without its file's 4.x reading of `type: rubrics`; the score and "
        "verdict are AgentV's)",
    "features/sdk-custom-assertion/evals/dataset.eval.yaml":
        "a custom assertion's reported type: AgentV 4.42 writes the assertion's own type name (`word-count`), the "
        "gate `custom-assertion`",
}
"""Eval files whose cases have AgentV's score and verdict and differ in evaluator types or assertion texts: why,
for known-differences.json (checked by a person, not guessed)."""


def shared_root() -> Path:
    return REPO.parent / "shared" / "agentv"


INSTALLED = Path("/tmp/av4")
"""Where the machine's shared README installs AgentV 4.42.4: used before installing a copy of our own."""


def install_agentv() -> Path:
    """The cached install, else /tmp/av4 when it holds 4.42.4, else a fresh install into the cache."""
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "agentv-gate-compat" / f"agentv-{VERSION}"
    cli = home / "node_modules" / ".bin" / "agentv"
    if cli.exists():
        return cli
    other = INSTALLED / "node_modules" / ".bin" / "agentv"
    if other.exists() and _version(other) == VERSION:
        return other
    shutil.copytree(shared_root() / VERSION, home, dirs_exist_ok=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=home, check=True)
    return cli


def _version(cli: Path) -> str:
    done = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=False,
                          env={**os.environ, "AGENTV_NO_UPDATE_CHECK": "1"})
    return done.stdout.strip()


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
    shutil.copytree(shared_root() / f"root-agentv-{VERSION}", tree / ".agentv")  # as AgentV's checkout has it
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
                "FAKE_MODEL_URL": model_url, "FAKE_MODEL_NAME": "fake-model",
                # the root targets' copilot reads it; unset, the gate refuses a run that uses that target (an
                # unset variable is an error there) where AgentV leaves `--model` out: both get the same value
                "COPILOT_MODEL": "fake-model", **SWITCHED})
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
    for index, target in enumerate(own):  # an LLM target would call the network: the fake model answers for it
        if target.get("provider") == "openai":
            target.update({"base_url": "${{ FAKE_MODEL_URL }}", "api_key": "${{ OPENAI_API_KEY }}",
                           "model": "${{ FAKE_MODEL_NAME }}"})
            target.pop("endpoint", None)
        elif target.get("provider") in LLM_PROVIDERS:
            # `azure`, `gemini`, `openrouter` call the network: each is the loopback model here
            own[index] = _fake(str(target.get("name")), str(target.get("grader_target") or "grader"))
    # AgentV's root targets.yaml: `default`, `agent`, `llm`, `grader` are `use_target: ${{ X_TARGET }}` switches,
    # kept as a team has them: SWITCHED (set in `environment`) points each at a loopback target of its own
    wanted.update(SWITCHED.values())
    defined = {t.get("name") for t in own}
    fake = [_fake(name, "grader") for name in sorted(wanted - defined)]
    path = out / "targets.yaml"
    path.write_text(yaml.safe_dump({"targets": [*own, *fake]}, sort_keys=False))
    return path


def _drop_agent_targets(path: Path) -> None:
    kept = [t for t in yaml.safe_load(path.read_text())["targets"] if t.get("provider") in ("openai", "cli", "mock")]
    path.write_text(yaml.safe_dump({"targets": kept}, sort_keys=False))


SWITCHED = {"AGENT_TARGET": "fake-agent", "LLM_TARGET": "fake-llm", "GRADER_TARGET": "fake-grader"}
"""The variables AgentV's root `use_target` switches read, and the loopback target each names here."""


def _fake(name: str, grader: str) -> dict[str, Any]:
    """The loopback model as target `name` (a grader of its own when it is not a grader)."""
    return {"name": name, "provider": "openai", "base_url": "${{ FAKE_MODEL_URL }}", "api_key": "${{ OPENAI_API_KEY }}",
            "model": "${{ FAKE_MODEL_NAME }}", **({} if name in ("grader", "fake-grader") else {"grader_target": grader})}


def _rounded(value: Any) -> float | None:
    return round(float(value), 6) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


_DURATION = re.compile(r"\b\d+(?:\.\d+)?ms\b")
_TREE = re.compile(r"/\S*?/ex/")


def _text(value: Any) -> str:
    """An assertion text as the two runs can compare it: a timing (`Duration 78ms`) and the temporary tree's
    path (`/tmp/agentv442-x/ex/`) differ from run to run and say nothing about the reading."""
    return _TREE.sub("<tree>/", _DURATION.sub("<n>ms", str(value)))


def _graders(entries: Any) -> list[dict[str, Any]]:
    """Each `scores[]` entry (composite members after their composite) as name, type (`_` as `-`), hits and
    misses (sorted: the order AgentV lists them in is not compared)."""
    found: list[dict[str, Any]] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        assertions = [a for a in entry.get("assertions") or [] if isinstance(a, dict)]
        hits = [a.get("text") for a in assertions if a.get("passed")] + list(entry.get("hits") or [])
        misses = [a.get("text") for a in assertions if not a.get("passed")] + list(entry.get("misses") or [])
        found.append({"name": entry.get("name"), "type": _type(entry.get("type")),
                      "hits": sorted(_text(t) for t in hits), "misses": sorted(_text(t) for t in misses)})
        found += _graders(entry.get("scores"))
    return found


def agentv_rows(out: Path) -> dict[str, dict[str, Any]]:
    """AgentV 4.42's `index.jsonl` (completion order) as test id -> score (6 places), verdict, error, graders.

    4.42's verdict is its execution_status: ok (passed its threshold), quality_failure, execution_error."""
    rows: dict[str, dict[str, Any]] = {}
    targets: dict[str, set[str]] = {}
    for path in out.rglob("index.jsonl"):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            case = row.get("test_id") or row.get("eval_id") or row.get("id")
            if not isinstance(case, str):
                continue
            status = row.get("execution_status")
            targets.setdefault(case, set()).add(str(row.get("target")))
            rows[case] = {"score": _rounded(row.get("score")), "passed": status == "ok",
                          "verdict": {"ok": "pass", "quality_failure": "fail"}.get(str(status), "error"),
                          "error": status == "execution_error", "graders": _graders(row.get("scores")),
                          **({"target": row.get("target")} if len(targets[case]) > 1 else {})}
    return rows


def gate_rows(results: Path) -> dict[str, dict[str, Any]]:
    """agentv-gate's results.jsonl as test id -> score (6 places), verdict, error, graders."""
    if not results.is_file():
        return {}
    return gate_rows_of([json.loads(line) for line in results.read_text().splitlines() if line.strip()])


def gate_rows_of(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Test id -> the row as compared (the last written); a case run on several targets (a matrix) is also
    under `id@target`, so it is compared with AgentV's row of the same target (`agentv_rows`' `target`)."""
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        compared = {"score": _rounded(row.get("score")), "passed": row.get("verdict") == "pass",
                    "verdict": "pass" if row.get("verdict") == "pass" else
                    "error" if row.get("verdict") == "error" else "fail",
                    "error": row.get("verdict") == "error", "graders": _graders(row.get("scores"))}
        found[row["eval_id"]] = compared
        found[f"{row['eval_id']}@{row.get('target')}"] = compared
    return found


def gate_row_for(gate: dict[str, dict[str, Any]], case: str, agentv: dict[str, Any] | None) -> dict[str, Any] | None:
    """The gate's row to compare with AgentV's row of `case`: of AgentV's row's target, when AgentV ran the case
    on several (its index lists a matrix by target, the gate's results by completion, so the last row of an id
    is not the same target's in both)."""
    target = (agentv or {}).get("target")
    return gate.get(f"{case}@{target}") if target else gate.get(case)


def differences(a: dict[str, Any], g: dict[str, Any]) -> list[str]:
    """What differs in one case between AgentV's row `a` and the gate's `g`: score, verdict, error state,
    evaluator names and types, assertion texts (empty when the case is identical)."""
    found = [f"{key} {a[key]} vs {g[key]}" for key in ("score", "verdict", "error") if a[key] != g[key]]
    return found + grader_differences(a["graders"], g["graders"])


def grader_differences(a: list[dict[str, Any]], g: list[dict[str, Any]]) -> list[str]:
    """Evaluator names, types and assertion texts (`_graders`) that differ; none when either side wrote no
    `scores[]` (AgentV writes none for some rows: a single default grader)."""
    if not a or not g:
        return []
    found: list[str] = []
    names = ([x["name"] for x in a], [x["name"] for x in g])
    if names[0] != names[1]:
        found.append(f"evaluator names {names[0]} vs {names[1]}")
    for x, y in zip(a, g, strict=False):
        if x["type"] != y["type"]:
            found.append(f"{x['name']}: type {x['type']} vs {y['type']}")
        for key in ("hits", "misses"):
            if x[key] != y[key]:
                found.append(f"{x['name']}: {key} {x[key][:6]} vs {y[key][:6]}")
    return found


def names_only(found: list[str]) -> bool:
    """A case whose only difference is its evaluators' names."""
    return bool(found) and all(item.startswith("evaluator names ") for item in found)


def texts_differ(found: list[str]) -> bool:
    """A case whose evaluators' types or assertion texts differ."""
    return any(": type " in item or ": hits " in item or ": misses " in item for item in found)


def _type(value: Any) -> str:
    return str(value).replace("_", "-")


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
    parser.add_argument("--only-llm-targets", action="store_true",
                        help="diagnosis only: leave out of each targets file the agent targets (claude-cli, copilot, "
                             "codex ...) that are not the loopback model, to see the differences behind a refusal")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="compare (and record) the logs a --keep run left in this folder, running nothing")
    parser.add_argument("--rerun-gate", action="store_true",
                        help="with --reuse: run the gate again (validate and run, as before) on the kept tree, keeping "
                             "AgentV's results: the current gate against a kept AgentV run")
    args = parser.parse_args()
    cli = args.agentv or install_agentv()
    version = _version(cli)
    bun = None if args.reuse and not args.rerun_gate else find_bun(cli)
    work = args.reuse or Path(tempfile.mkdtemp(prefix="agentv442-"))
    tree = work / "ex" if args.reuse else prepare_tree(work)
    recorded: dict[str, Any] = {"agentv": version, "suites": {}}
    counts = {"files": 0, "cases": 0, "same_score": 0, "same_verdict": 0, "agentv_fail_gate_pass": 0,
              "gate_fail_agentv_pass": 0, "identical": 0, "names_only": 0, "texts_differ": 0}
    refused_but_run: list[str] = []
    known: dict[str, Any] = {"refused": {}, "cases": {}}
    lines: list[str] = []
    with FakeModel() as model:
        env = environment(work, model.url, bun)
        for suite in eval_files(tree):
            rel = suite.relative_to(tree).as_posix()
            if args.only and not fnmatch.fnmatch(rel, args.only):
                continue
            out = work / "out" / rel.replace("/", "__")
            if args.reuse and args.rerun_gate:
                if not (out / "validate.log").is_file():
                    continue
                shutil.rmtree(out / "gate", ignore_errors=True)
                (out / "gate.log").unlink(missing_ok=True)
                check = run([str(GATE), "validate", str(suite), "--targets", str(out / "targets.yaml")], tree, env,
                            out / "validate.log")
            elif args.reuse:
                if not (out / "validate.log").is_file():
                    continue
                check = 0 if (out / "gate.log").is_file() else 1
            else:
                out.mkdir(parents=True)
                targets = targets_for(suite, tree, out)
                if args.only_llm_targets:
                    _drop_agent_targets(targets)
                check = run([str(GATE), "validate", str(suite), "--targets", str(targets)], tree, env,
                            out / "validate.log")
                run([str(cli), "eval", str(suite), "-o", str(out / "av"), "--targets", str(targets)], tree, env,
                    out / "agentv.log")
            av = agentv_rows(out / "av")
            if check != 0:
                reason = _first_problem(out / "validate.log")
                if any(not row["error"] for row in av.values()):  # AgentV ran it offline: the gate must too
                    refused_but_run.append(f"{rel}: {reason}")
                    known["refused"][rel] = reason
                    recorded["suites"][rel] = {"inputs_sha256": inputs_hash(suite), "cases": {
                        case: {"score": a["score"], "passed": a["passed"], "verdict": a["verdict"]}
                        for case, a in sorted(av.items())}}
                    lines.append(f"REFUSED  {rel} (AgentV ran {len(av)} case(s)): {reason}")
                else:
                    lines.append(f"REFUSED  {rel} (AgentV ran no case either): {reason}")
                continue
            if not args.reuse or args.rerun_gate:
                run([str(GATE), "run", str(suite), "--targets", str(out / "targets.yaml"), "--output-dir",
                     str(out / "gate"), "--no-cache", "-q"], tree, env, out / "gate.log")
            gate = gate_rows(out / "gate" / "results.jsonl")
            if not av:
                lines.append(f"SKIPPED  {rel}: AgentV ran no case here ({_last_line(out / 'agentv.log')})")
                continue
            cases: dict[str, Any] = {}
            for case in sorted(set(av) | {c for c in gate if "@" not in c}):
                a = av.get(case)
                g = gate_row_for(gate, case, a)
                if a is None or g is None:
                    lines.append(f"ONE-SIDE {rel} {case}: only {'AgentV' if g is None else 'agentv-gate'} ran it")
                    continue
                counts["cases"] += 1
                counts["same_score"] += a["score"] == g["score"]
                counts["same_verdict"] += a["verdict"] == g["verdict"]
                counts["agentv_fail_gate_pass"] += not a["passed"] and g["passed"]
                counts["gate_fail_agentv_pass"] += a["passed"] and not g["passed"]
                found = differences(a, g)
                counts["identical"] += not found
                counts["names_only"] += names_only(found)
                counts["texts_differ"] += texts_differ(found)
                if found:
                    tag = "KNOWN   " if rel in KNOWN_DIFFERENCES else "WRONG-PASS" if g["passed"] and not a["passed"] \
                        else "DIFFERS "
                    lines.append(f"{tag} {rel} {case}: " + "; ".join(found)
                                 + (f" [{KNOWN_DIFFERENCES[rel]}]" if rel in KNOWN_DIFFERENCES else ""))
                cases[case] = {"score": a["score"], "passed": a["passed"], "verdict": a["verdict"],
                               "graders": a["graders"], **({"target": a["target"]} if "target" in a else {})}
                differs = {key: g[key] for key in ("score", "verdict") if a[key] != g[key]}
                if compares_graders(a, g) and grader_differences(a["graders"], g["graders"]):
                    differs["graders"] = g["graders"]
                if differs:
                    cause = cause_of(suite, rel, a, g)
                    entry = known["cases"].setdefault(rel, {"cause": cause, "cases": {}})
                    if cause not in entry["cause"]:  # a file whose cases differ for two reasons says both
                        entry["cause"] += f"; {cause}"
                    entry["cases"][case] = {"score": g["score"], "verdict": g["verdict"], **differs}
            if cases:
                counts["files"] += 1
                recorded["suites"][rel] = {"inputs_sha256": inputs_hash(suite), "cases": cases}
                lines.append(f"RAN      {rel}: {len(cases)} case(s)")
    print("\n".join(lines))
    print(f"\nAgentV {version} vs agentv-gate, each with its own defaults: {counts['files']} eval file(s) run "
          f"by both; {counts['cases']} case(s): {counts['same_score']} same score, {counts['same_verdict']} same "
          f"verdict, {counts['identical']} identical in every field, {counts['names_only']} differing only in "
          f"evaluator names, {counts['texts_differ']} in evaluator types or assertion texts; AgentV fails and the "
          f"gate passes: "
          f"{counts['agentv_fail_gate_pass']}; the gate fails and AgentV passes: {counts['gate_fail_agentv_pass']}; "
          f"files AgentV runs offline that the gate refuses: {len(refused_but_run)}")
    for line in refused_but_run:
        print(f"  refused: {line}")
    print(f"Logs: {work}/out")
    (work / "summary.json").write_text(json.dumps({"counts": counts, "refused_but_run": refused_but_run}, indent=1))
    if args.record:
        EXPECTED.parent.mkdir(parents=True, exist_ok=True)
        EXPECTED.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        KNOWN.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
        print(f"recorded {EXPECTED.relative_to(REPO)} and {KNOWN.relative_to(REPO)}")
    failed = counts["cases"] != counts["same_verdict"] or counts["agentv_fail_gate_pass"] or refused_but_run
    if not args.keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def compares_graders(a: dict[str, Any], g: dict[str, Any]) -> bool:
    """Names and texts are recorded and replayed unless a side is an error (an execution error's text is a
    documented difference) or the file's difference has a cause outside the gate's reading of it."""
    return not (a["error"] or g["error"])


def cause_of(suite: Path, rel: str, a: dict[str, Any], g: dict[str, Any]) -> str:
    """Why a recorded case differs, for known-differences.json: a first reading for a person to check."""
    if rel in KNOWN_DIFFERENCES:
        return KNOWN_DIFFERENCES[rel]
    if g["error"] and not a["error"]:
        return "a judge that cannot run here is an error in the gate, a failure in AgentV (the documented difference)"
    if rel in TEXT_CAUSES and a["score"] == g["score"] and a["verdict"] == g["verdict"]:
        return TEXT_CAUSES[rel]
    if a["score"] == g["score"] and a["verdict"] == g["verdict"]:
        return "evaluator names, types or assertion texts: not yet explained"
    return "not yet explained"


def _first_problem(log: Path) -> str:
    lines = log.read_text().splitlines()
    for line in [x for x in lines if ": warning: " not in x] + lines:
        if ": " in line and not line.startswith("agentv-gate:"):
            return line.split(": ", 1)[1][:160]
    return _last_line(log)


def _last_line(log: Path) -> str:
    text = [line for line in log.read_text().splitlines() if line.strip() and line != "--- stderr ---"]
    return text[-1][:160] if text else "no output"


if __name__ == "__main__":
    raise SystemExit(main())
