"""AgentV 4.42.4's agentic llm-grader side by side with agentv-gate's: the same suite, the same loopback model.

    python compat/agentv_4_42/agentic_grader.py [--agentv PATH/TO/agentv] [--keep]

AgentV's example tree has no `provider: agentv` grader that runs offline (its built-in agent calls the
provider's public API: pi-ai fixes the OpenAI base URL for a `openai:<id>` model), so this script writes
one suite of its own and gives both tools the same loopback `fake_model.py`: AgentV through a preloaded
`fetch` that sends `https://api.openai.com/v1` to the loopback model (`redirect_model_apis.cjs`, nothing else
of AgentV touched), the gate through the target's `base_url`. Cases: an agent that adds a function
(the model lists and searches the workspace: 1.0), one that changes nothing (0.0), a probe of the tools'
edges (`..`, an absolute path, a folder, a missing file, an unknown tool, arguments that are not JSON, a
bad regex: the verdict quotes every result), and a model that asks for tools forever (the step budget).

Each wire runs in turn: `openai:fake-model` (chat completions) and `anthropic:claude-sonnet-4-20250514` (the
Messages API; AgentV refuses an Anthropic id pi-ai's model table lacks). Compared: each model request both
sent (messages, tools, temperature, system prompt: the prompts and every tool result, byte for byte, an
error's absolute workspace path aside), and per case the score, verdict, assertion texts and the grader's
`details` (mode, steps, tool calls). Exit 1 on any difference. Not compared: pi-ai's streaming keys
(`stream`, `stream_options`, a tool's `eager_input_streaming`), `store: false`, and Anthropic's `max_tokens`
(pi-ai asks for a third of the model's limit in its table, 21,333 for that model; the gate, without the
table, a third of pi-ai's fallback 16,384: 5,461).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from compat.agentv_4_42 import fake_model  # noqa: E402
from compat.agentv_4_42.run_differential import GATE, INSTALLED  # noqa: E402

SUITE = """\
description: the built-in agent grader of AgentV 4.42, side by side
workspace:
  template: ../ws
  isolation: per_test
execution:
  target: agent
tests:
  - id: adds-subtract
    input: Add a subtract function to src/calculator.ts
    criteria: src/calculator.ts has a subtract function
    assertions:
      - {name: explore, type: llm-grader, max_steps: 3}
  - id: no-change
    input: Say hello
    criteria: src/calculator.ts has a subtract function
    assertions:
      - {name: explore, type: llm-grader}
  - id: tool-edges
    input: "probe:escape"
    criteria: the tools answer every call
    assertions:
      - {name: explore, type: llm-grader}
  - id: calls-forever
    input: "probe:forever"
    criteria: the grader stops
    assertions:
      - {name: explore, type: llm-grader}
"""
AGENT = """#!/bin/sh
case "$1" in
  *subtract*) printf '\\nexport function subtract(a: number, b: number): number {\\n  return a - b;\\n}\\n' >> src/calculator.ts
              echo "Added subtract" > "$2";;
  *) echo "hello" > "$2";;
esac
"""
FILES = {"ws/src/calculator.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
         "outside.txt": "outside the workspace\n"}
"""The workspace template, and a file beside it a tool must not read."""
REDIRECT = HERE / "redirect_model_apis.cjs"
KEY = "sk-side-by-side-0123456789abcdef"
_ABSOLUTE = re.compile(r"'/[^']*'")


def _project(root: Path) -> None:
    (root / "evals").mkdir(parents=True)
    (root / ".agentv").mkdir()
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "evals" / "agentic.eval.yaml").write_text(SUITE)
    (root / "agent.sh").write_text(AGENT)
    (root / "agent.sh").chmod(0o755)
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def _targets(root: Path, base_url: str | None, model: str) -> None:
    extra = f"    base_url: {base_url}\n" if base_url else ""
    (root / ".agentv" / "targets.yaml").write_text(f"""targets:
  - name: agent
    provider: cli
    command: {root}/agent.sh {{PROMPT}} {{OUTPUT_FILE}}
    grader_target: explorer
  - name: explorer
    provider: agentv
    model: {model}
{extra}""")


def _request_key(body: dict[str, Any]) -> tuple[str, int]:
    """(the grader's user prompt, how many messages): which request of which case it is, on either wire."""
    first = next(m for m in body["messages"] if m["role"] == "user")["content"]
    text = first if isinstance(first, str) else "".join(str(b.get("text", "")) for b in first)
    return text, len(body["messages"])


def _comparable(body: dict[str, Any]) -> str:
    """The request as compared: its messages, tools and temperature, absolute paths in error texts blanked
    (each tool's workspace lives in its own folder)."""
    kept = {k: body.get(k) for k in ("messages", "tools", "temperature", "system")}
    for tool in kept["tools"] or []:
        tool.pop("eager_input_streaming", None)  # pi-ai's, for a streamed tool input: the gate reads replies whole
    if isinstance(kept["temperature"], (int, float)):
        kept["temperature"] = float(kept["temperature"])  # JSON's 0 and 0.0 are one number
    return _ABSOLUTE.sub("'<abs>'", json.dumps(kept, sort_keys=True))


def _blank(text: str) -> str:
    return _ABSOLUTE.sub("'<abs>'", text)


def _first_difference(mine: str, theirs: str) -> str:
    """Where two compared requests part: the first differing message (or field), both sides."""
    a, b = json.loads(theirs), json.loads(mine)
    for index, (x, y) in enumerate(zip(a["messages"] or [], b["messages"] or [], strict=False)):
        if x != y:
            return f"message {index}:\n    agentv {json.dumps(x)[:600]}\n    gate   {json.dumps(y)[:600]}"
    field = next((k for k in a if a[k] != b.get(k)), "messages")
    return f"{field}:\n    agentv {json.dumps(a.get(field))[:600]}\n    gate   {json.dumps(b.get(field))[:600]}"


def _agentv_cases(out: Path) -> dict[str, dict[str, Any]]:
    cases = {}
    for line in (out / "index.jsonl").read_text().splitlines():
        row = json.loads(line)
        grader = row["scores"][0]
        cases[row["test_id"]] = {"score": round(float(row["score"]), 6), "verdict": grader["verdict"],
                                 "passed": [_blank(a["text"]) for a in grader.get("assertions", []) if a.get("passed")],
                                 "failed": [_blank(a["text"]) for a in grader.get("assertions", [])
                                            if not a.get("passed")],
                                 "details": grader.get("details")}
    return cases


def _gate_cases(out: Path) -> dict[str, dict[str, Any]]:
    cases = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        grader = row["scores"][0]
        verdict = grader.get("verdict") or ("pass" if grader["score"] >= 0.8 else "fail")
        cases[row["eval_id"]] = {"score": round(float(row["score"]), 6), "verdict": verdict,
                                 "passed": [_blank(t) for t in grader["hits"]],
                                 "failed": [_blank(t) for t in grader["misses"]],
                                 "details": grader.get("details")}
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agentv", default=str(INSTALLED / "node_modules" / ".bin" / "agentv"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print it")
    parser.add_argument("--model", action="append", help="the grader's model, repeatable (default: "
                        "openai:fake-model and anthropic:claude-sonnet-4-20250514, each wire in turn)")
    args = parser.parse_args()
    failed = 0
    for model in args.model or ["openai:fake-model", "anthropic:claude-sonnet-4-20250514"]:
        print(f"== {model}")
        failed += _side_by_side(args.agentv, model, args.keep)
    return 1 if failed else 0


def _side_by_side(agentv: str, model: str, keep: bool) -> int:
    work = Path(tempfile.mkdtemp(prefix="agentic-grader-"))
    bodies: list[dict[str, Any]] = []
    answer = fake_model.tool_turn

    def recorded(body: dict[str, Any]) -> Any:
        if body.get("tools"):
            bodies.append(body)
        return answer(body)

    fake_model.tool_turn = recorded  # type: ignore[assignment]
    results: dict[str, dict[str, dict[str, Any]]] = {}
    requests: dict[str, dict[tuple[str, int], str]] = {}
    try:
        with fake_model.FakeModel() as fake:
            for tool in ("agentv", "gate"):
                root = work / tool
                _project(root)
                _targets(root, None if tool == "agentv" else fake.url, model)
                env = {**os.environ, "OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY, "FAKE_MODEL_URL": fake.url,
                       "AGENTV_NO_UPDATE_CHECK": "1"}
                out = root / "out"
                if tool == "agentv":
                    env["NODE_OPTIONS"] = f"--require {REDIRECT}"
                    command = [agentv, "eval", "evals/agentic.eval.yaml", "--output", str(out)]
                else:
                    command = [str(GATE), "run", "evals", "--no-cache", "--output-dir", str(out)]
                start = len(bodies)
                done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
                made = bodies[start:]
                requests[tool] = {_request_key(b): _comparable(b) for b in made}
                try:
                    results[tool] = _agentv_cases(out) if tool == "agentv" else _gate_cases(out)
                except (OSError, ValueError, KeyError) as exc:
                    print(f"{tool} wrote no results ({exc}; exit {done.returncode}):\n{done.stderr[-2000:]}")
                    return 1
                print(f"{tool}: exit {done.returncode}, {len(made)} model request(s) with tools")
    finally:
        fake_model.tool_turn = answer  # type: ignore[assignment]
        if keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    differences = [f"request {key[0][:60]!r} (message {key[1]}): only {tool}"
                   for tool, other in (("agentv", "gate"), ("gate", "agentv"))
                   for key in requests[tool] if key not in requests[other]]
    differences += [f"request {key[0][-80:]!r} ({key[1]} messages) differs at "
                    f"{_first_difference(requests['gate'][key], text)}" for key, text in requests["agentv"].items()
                    if key in requests["gate"] and requests["gate"][key] != text]
    for case in sorted(set(results["agentv"]) | set(results["gate"])):
        mine, theirs = results["gate"].get(case), results["agentv"].get(case)
        status = "SAME" if mine == theirs else "DIFFERS"
        print(f"{status:8} {case}: agentv {theirs}" + ("" if mine == theirs else f"\n{'':9}gate   {mine}"))
        if mine != theirs:
            differences.append(f"case {case}")
    print(f"{len(requests['agentv'])} requests compared, {len(results['agentv'])} cases: "
          f"{len(differences)} difference(s)")
    for difference in differences:
        print("  " + difference)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
