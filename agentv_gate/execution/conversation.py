"""What a conversation test's calls and graders see, and how its turns' scores add up (AgentV 4.42's conversation mode).

The conversation so far is the test's `input` messages, then each turn's user message and the agent's actual
reply (never the turn's expected output). With `window_size: N`, a call and a turn's graders see the system
messages and the last N exchanges (2N messages) only; the graders' question is that window as text,
`role: content` blocks separated by blank lines. The test's own assertions judge the whole transcript
written that way. The case's score is the mean (or min, or max, by `aggregation`) of every turn's score and,
when the test has assertions, the transcript's; no score at all is 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base.jscompat import js_sum
from ..models import Message


def windowed(history: Sequence[Message], window_size: int | None) -> list[Message]:
    """The system messages and the last `window_size` exchanges (all of it when None)."""
    if not window_size:
        return list(history)
    system = [m for m in history if m.role == "system"]
    rest = [m for m in history if m.role != "system"]
    return [*system, *rest[-window_size * 2:]]


def transcript(history: Sequence[Message], window_size: int | None = None) -> str:
    """`role: content` blocks, one per message, separated by blank lines."""
    return "\n\n".join(f"{m.role}: {m.content if isinstance(m.content, str) else m.text()}"
                       for m in windowed(history, window_size))


def aggregate(scores: Sequence[float], how: str) -> float:
    if not scores:
        return 1.0
    if how == "min":
        return min(scores)
    if how == "max":
        return max(scores)
    return js_sum(scores) / len(scores)
