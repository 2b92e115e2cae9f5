"""The GitHub runner's side of a run: which log lines it takes for commands, what it reads from $GITHUB_OUTPUT.

Modelled on actions/runner, so a test checks what the runner would make of our output rather
than what we meant to write.
"""

from __future__ import annotations

import re

_V2_COMMAND = re.compile(r"^::")


def runner_commands(log: str) -> list[str]:
    """Every line the GitHub runner would take for a workflow command (actions/runner ActionCommand).

    TryParseV2: after trimming leading whitespace, a line starting with `::`. TryParse (legacy):
    `##[` anywhere in the line. Lines end as .NET's StreamReader.ReadLine ends them: CR, LF or CRLF.
    """
    commands = []
    for line in re.split(r"\r\n|\r|\n", log):
        if _V2_COMMAND.match(line.lstrip()) or "##[" in line:
            commands.append(line)
    return commands


def parse_github_output(text: str) -> dict[str, str]:
    """`$GITHUB_OUTPUT` as the runner reads it: `k=v` lines and `k<<DELIM` heredocs; raises if malformed."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise ValueError(f"heredoc for {name!r} never ends")
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            raise ValueError(f"unparseable GITHUB_OUTPUT line: {line!r}")
        if not name:
            raise ValueError("empty output name")
        i += 1
    return values
