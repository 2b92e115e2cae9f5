#!/usr/bin/env python3
"""Code judge (agentv-gate SDK): the share of `config.keywords` the answer mentions.

    - name: keywords
      type: code_judge
      script: python3 examples/judges/keyword_judge.py
      keywords: [Paris, France]          # unknown keys reach the judge as `config`
      case_sensitive: false

Run it by hand:  echo '{"answer": "Paris!", "config": {"keywords": ["Paris"]}}' | python3 keyword_judge.py
"""

from agentv_gate.sdk import CodeJudgeInput, CodeJudgeResult, define_code_judge


@define_code_judge
def judge(payload: CodeJudgeInput) -> CodeJudgeResult:
    config = payload.config or {}
    keywords = [str(k) for k in config.get("keywords", [])]
    if not keywords:
        raise ValueError("config.keywords is empty: list the words the answer must mention")
    sensitive = bool(config.get("case_sensitive", True))
    answer = payload.answer if sensitive else payload.answer.lower()
    found = [k for k in keywords if (k if sensitive else k.lower()) in answer]
    missing = [k for k in keywords if k not in found]
    return CodeJudgeResult(
        score=len(found) / len(keywords),
        hits=[f"mentions {k}" for k in found],
        misses=[f"does not mention {k}" for k in missing],
        reasoning=f"{len(found)}/{len(keywords)} keywords present",
    )
