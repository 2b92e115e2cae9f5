"""The reports' HTML escaping is the standard library's, without importing `html` at every start."""

from __future__ import annotations

import html

import pytest

from agentv_gate.report.text import escape_html


@pytest.mark.parametrize("text", ["", "plain", "a & b", "<script>alert('x')</script>", 'say "hi"', "&amp; already",
                                  "\u2028 é <>&\"'", "'" * 3 + '"' * 3])
def test_escape_html_writes_what_html_escape_writes(text: str) -> None:
    assert escape_html(text) == html.escape(text)
    assert escape_html(text, quote=False) == html.escape(text, quote=False)
