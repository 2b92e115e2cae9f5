#!/usr/bin/env python3
"""Executable prompt template (agentv-gate SDK): prints the prompt an LLM judge is given.

    - name: rubric
      type: llm_judge
      prompt:
        script: [python3, examples/judges/rubric_prompt.py]
        config:
          rubric: ["names the capital", "answers in one sentence"]
"""

from agentv_gate.sdk import PromptTemplateInput, define_prompt_template


@define_prompt_template
def prompt(payload: PromptTemplateInput) -> str:
    rubric = (payload.config or {}).get("rubric") or [payload.criteria or "answers the question correctly"]
    items = "\n".join(f"- {item}" for item in rubric)
    expected = payload.expected_output_text
    reference = f"\nReference answer:\n{expected}\n" if expected else ""
    return (
        "Grade the answer against every rubric item.\n\n"
        f"Question:\n{payload.input_text}\n{reference}\n"
        f"Answer:\n{payload.output_text}\n\n"
        f"Rubric:\n{items}\n"
    )
