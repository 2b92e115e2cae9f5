"""The floor every layer stands on: standard-library-only building blocks that import nothing else of agentv_gate.

AgentV's wire casing (`wire`), JavaScript-compatible numbers, strings and regexes (`jscompat`), the
defaults `--help` states (`defaults`), the table of AgentV generations (`generations`), safe file
writes (`files`), located problems (`problems`), key checks with did-you-mean and the `NOT_YET` table
(`key_checks`), and the YAML 1.2 rules (`yaml12`). Importing nothing above them, they can be used by
any module without creating a cycle.
"""
