"""Text operations read as AgentV's JavaScript reads them: `trim()`, white space, and RegExp patterns.

AgentV's assertions are one-liners over JavaScript built-ins (`output.trim() === value.trim()`,
`new RegExp(pattern, flags).test(output)`). Python's nearest built-ins differ at the edges, and
every difference is a verdict that could disagree with AgentV: `str.strip()` takes U+0085 and
leaves a byte-order mark; Python's `re` reads `\\A`, `{,3}` and `(?i)` where JavaScript reads the
letter A, the text "{,3}" and a syntax error. `tests/test_javascript.py` checks the translation
against Node's own RegExp.

A pattern is translated token by token into a Python pattern meaning what JavaScript means; what
JavaScript refuses, or what has no Python spelling here, raises ValueError (the loader turns it
into a located error, so no case runs on a pattern AgentV would read otherwise).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

JS_SPACES = r"\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
r"""JavaScript's white space (`\s`, what `trim()` and `parseFloat` skip), as a regex class body; Python's
`\s` and `str.strip()` also take U+001C..U+001F and U+0085 and lack U+FEFF (a byte-order mark)."""
_TRIM = re.compile(f"^[{JS_SPACES}]+|[{JS_SPACES}]+$")


def js_sum(values: Iterable[float]) -> float:
    """The numbers added as AgentV's loops and `reduce((sum, s) => sum + s, 0)` add them: left to right,
    rounding after every addition. Not `sum()`: from Python 3.12 it compensates float rounding, so 0.1
    three times at scores 0.5, 0.75 and 1.0 weighs in at 0.75 where JavaScript makes 0.7499999999999999,
    and a case on a 0.75 threshold passed that AgentV fails."""
    total = 0.0
    for value in values:
        total += value
    return total


def js_trim(text: str) -> str:
    """`text.trim()` as AgentV's JavaScript does it: a leading byte-order mark goes, U+001C does not."""
    return _TRIM.sub("", text)


def js_number(value: Any) -> Any:
    """A parsed JSON value as JavaScript holds it: a number is a double, and an integer too large for one
    is Infinity there, where Python keeps it exact and `float()` or `math.isfinite` on it raises
    OverflowError; anything else (a boolean among them: Python's `True` is an int) is returned as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_finite_number(value: Any) -> bool:
    """Whether a parsed JSON value is a number JavaScript holds as finite (`typeof x === 'number'` and not
    NaN or Infinity): never a boolean, text that spells a number, or an integer past a double's range."""
    number = js_number(value)
    return isinstance(number, float) and math.isfinite(number)


def reported_number(value: Any) -> float | None:
    """A metric a target or an agent reported (a cost, a duration, a token count): a finite number >= 0
    as JavaScript holds it, else None (missing, null, text, a boolean, NaN, Infinity, negative), which
    the evaluators needing it read as "not reported", never as 0."""
    return float(value) if is_finite_number(value) and value >= 0 else None


REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "g": 0, "u": 0, "y": 0, "d": 0, "v": 0}
"""`y` (sticky) compiles to nothing here: the regex evaluator reads it, matching at position 0 only."""

_LINE_TERMINATORS = r"\n\r\u2028\u2029"
_CLASS_BODIES = {"d": "0-9", "w": "A-Za-z0-9_", "s": JS_SPACES}
r"""JavaScript's `\d`, `\w`, `\s` as class bodies: ASCII digits and word characters, where Python's are Unicode."""
_ANY = r"[\s\S]"
_QUANTIFIER = re.compile(r"\{(\d+)(,(\d*))?\}")
_GROUP_NAME = re.compile(r"<([A-Za-z_$][A-Za-z0-9_$]*)>")
_SYNTAX = set("^$\\.*+?()[]{}|/")
"""What the u and v flags let a backslash escape besides letters and digits (and `-` in a class)."""
_SET_PUNCTUATORS = "&-!#%,:;<=>@`~"
"""What a class may escape with the v flag besides the syntax characters (and what may not be doubled there)."""
_DOUBLED = "&!#$%*+,.:;<=>?@^`~"
"""Punctuators the v flag reserves in a class when doubled (`&&`, `!!`, ...)."""
_NOT_ANCHORS = {"A": "^", "Z": "$", "z": "$", "a": None}
"""Python escapes that JavaScript reads as plain letters (`\\A` is the letter A), with what was meant."""


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_ESCAPED_PAIR = re.compile(r"u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)


def _utf16_units(text: str) -> str:
    """The text as JavaScript strings hold it: a character outside the Basic Multilingual Plane (an
    emoji) becomes its two surrogates, so that `.`, `[^a]` and `{2}` count what JavaScript counts."""
    if not _ASTRAL.search(text):
        return text
    return _ASTRAL.sub(lambda found: _surrogates(ord(found.group(0))), text)


def _surrogates(code_point: int) -> str:
    offset = code_point - 0x10000
    return chr(0xD800 + (offset >> 10)) + chr(0xDC00 + (offset & 0x3FF))


@dataclass(frozen=True)
class JsRegExp:
    """A compiled pattern with what `RegExp.prototype.test` does around the match: without the u or v
    flag JavaScript matches UTF-16 code units, and a sticky (`y`) RegExp tries position 0 only."""

    compiled: re.Pattern[str]
    code_units: bool
    sticky: bool

    def test(self, text: str) -> bool:
        subject = _utf16_units(text) if self.code_units else text
        find = self.compiled.match if self.sticky else self.compiled.search
        return find(subject) is not None


def compile_js_regex(pattern: str, flags: str | None) -> JsRegExp:
    """A `regex` evaluator's JavaScript pattern and flags compiled for Python; raises ValueError naming
    the bad flag, the token JavaScript reads otherwise, or the compile error. The loader compiles every
    pattern before anything runs, and the evaluator compiles it the same way."""
    given = flags or ""
    value = 0
    for index, flag in enumerate(given):
        if flag not in REGEX_FLAGS:
            raise ValueError(f"unknown regex flag {flag!r} (expected some of {''.join(REGEX_FLAGS)})")
        if flag in given[:index]:
            raise ValueError(f"regex flag {flag!r} is given twice (JavaScript's RegExp refuses the pattern)")
        value |= REGEX_FLAGS[flag]
    if "u" in given and "v" in given:
        raise ValueError("regex flags 'u' and 'v' cannot be used together (JavaScript's RegExp refuses the pattern)")
    code_units = "u" not in given and "v" not in given
    translated = _Translator(_utf16_units(pattern) if code_units else pattern, given, shown=pattern).translate()
    try:
        with warnings.catch_warnings():  # "possible nested set": a literal `[` or `&&` in a class, as JavaScript reads it
            warnings.simplefilter("ignore", FutureWarning)
            compiled = re.compile(translated, value)
    except re.error as exc:
        raise ValueError(f"invalid regex /{pattern}/: {exc}") from None
    return JsRegExp(compiled, code_units, "y" in given)


class _Translator:
    """One pass over a JavaScript pattern, writing the Python pattern that means the same."""

    def __init__(self, pattern: str, flags: str, shown: str):
        self.pattern = pattern
        self.shown = shown  # as written (`pattern` holds an emoji as its two UTF-16 units without u)
        self.unicode = "u" in flags or "v" in flags
        self.sets = "v" in flags
        self.multiline = "m" in flags
        self.dotall = "s" in flags
        self.index = 0
        self.out: list[str] = []
        self.names = _capturing_groups(pattern)  # name (or "") of each capturing group, in order
        self.opened = 0
        self.closed: set[int] = set()
        self.enclosing: dict[int, list[int]] = {}  # capture number -> the groups around it (by order of opening)
        self.repeated: set[int] = set()  # groups (by order of opening) under a quantifier that allows two or more
        self.referenced: set[int] = set()
        self.opened_any = 0

    def refuse(self, why: str) -> ValueError:
        return ValueError(f"invalid regex /{self.shown}/: {why}")

    def translate(self) -> str:
        pattern = self.pattern
        quantifiable = False  # whether the last token can take a quantifier (JavaScript refuses `\\b*`, `^+`)
        groups: list[tuple[str, int, int]] = []  # the groups not closed yet: opening, capture number (0: none), order
        just_closed: int | None = None  # the group whose `)` is the last token, so a quantifier now repeats it
        while self.index < len(pattern):
            char = pattern[self.index]
            if char in "*+?" or (char == "{" and _QUANTIFIER.match(pattern, self.index)):
                # a quantifier right after this one was refused by `_quantifier`, so the next token resets both
                if self._quantifier(quantifiable) and just_closed is not None:
                    self.repeated.add(just_closed)
                continue
            just_closed = None
            if char == "\\":
                quantifiable = pattern[self.index + 1:self.index + 2] not in ("b", "B")
                self.out.append(self._escape(in_class=False))
            elif char == "[":
                self.out.append(self._class())
                quantifiable = True
            elif char == "(":
                opening = self._group_opening()
                capturing = opening == "(" or opening.startswith("(?P<")
                self.opened += capturing
                if capturing:  # the group itself counts: a round of `(b|\\1)+` empties group 1 before it starts
                    self.enclosing[self.opened] = [order for _, _, order in groups] + [self.opened_any]
                groups.append((opening, self.opened if capturing else 0, self.opened_any))
                self.opened_any += 1
                self.out.append(opening)
                quantifiable = False
            else:
                if char == ")" and groups:
                    # A lookbehind takes no quantifier; a lookahead does, as web browsers allow, but not with u or v.
                    opening, number, just_closed = groups.pop()
                    self.closed.add(number)
                    quantifiable = opening not in ("(?<=", "(?<!") and not (self.unicode and opening in ("(?=", "(?!"))
                else:
                    quantifiable = char not in "|^$"
                self.out.append(self._plain(char))
                self.index += 1
        self._check_references()
        return "".join(self.out)

    def _check_references(self) -> None:
        """At each repetition of a group JavaScript empties the captures inside it (the group's own too),
        so `^(?:(a)|b)+\\1$` matches "ab" (the second round, `b`, left group 1 empty); Python's re keeps
        "a" from the first round and does not match. JavaScript also never repeats a round that matched
        nothing, which Python does, so `^((a)?)*?\\1\\1$` differs on "a". No Python pattern says
        JavaScript's rules, so a reference to a repeated group, or to one inside it, is refused."""
        for number in sorted(self.referenced):
            if any(order in self.repeated for order in self.enclosing.get(number, [])):
                name = self.names[number - 1]
                shown = f"\\k<{name}>" if name else f"\\{number}"
                raise self.refuse(f"{shown} refers to group {number}, which is repeated or inside a repeated group: JavaScript "
                                  "empties it at each repetition and Python keeps its last match, so the two can "
                                  "disagree (no Python spelling here)")

    def _plain(self, char: str) -> str:
        if char == ".":
            return _ANY if self.dotall else f"[^{_LINE_TERMINATORS}]"
        if char == "$":  # Python's `$` also matches before a last "\n"; with m, JavaScript's before \r, U+2028 too
            return f"(?![^{_LINE_TERMINATORS}])" if self.multiline else r"\Z"
        if char == "^":
            return f"(?<![^{_LINE_TERMINATORS}])" if self.multiline else "^"
        if char in "{}]":
            if self.unicode:
                raise self.refuse(f"a lone {char!r} must be escaped with the u or v flag (JavaScript's RegExp refuses it)")
            return "\\" + char  # a literal, as JavaScript reads `a{,3}` (Python reads a quantifier)
        return char

    def _quantifier(self, quantifiable: bool) -> bool:
        """Writes the quantifier at the cursor; True when it allows two or more repetitions."""
        pattern = self.pattern
        if not quantifiable:
            raise self.refuse(f"nothing to repeat at {pattern[self.index]!r} (JavaScript's RegExp refuses it)")
        if pattern[self.index] == "{":
            match = _QUANTIFIER.match(pattern, self.index)
            assert match is not None
            token, self.index = match.group(0), match.end()
            most = match.group(3) if match.group(2) else match.group(1)
            repeats = most == "" or int(most) >= 2
        else:
            token, self.index = pattern[self.index], self.index + 1
            repeats = token != "?"
        if pattern.startswith("?", self.index):  # lazy
            token, self.index = token + "?", self.index + 1
        if self.index < len(pattern) and (pattern[self.index] in "*+?" or _QUANTIFIER.match(pattern, self.index)):
            raise self.refuse(f"nothing to repeat at {pattern[self.index]!r} after {token!r} (a possessive or "
                              "doubled quantifier; JavaScript's RegExp refuses it)")
        self.out.append(token)
        return repeats

    def _group_opening(self) -> str:
        pattern, start = self.pattern, self.index
        self.index += 1
        if not pattern.startswith("?", self.index):
            return "("
        rest = pattern[self.index + 1:]
        for opening in (":", "=", "!", "<=", "<!"):
            if rest.startswith(opening):
                self.index += 1 + len(opening)
                return "(?" + opening
        name = _GROUP_NAME.match(rest)
        if name:
            self.index += 1 + name.end()
            return f"(?P<{name.group(1)}>"
        shown = pattern[start:start + 4]
        hint = " (inline flags: give them in `flags:` instead)" if rest[:1].isalpha() and rest[:1] != "P" else ""
        raise self.refuse(f"{shown!r}... is not JavaScript group syntax (JavaScript's RegExp refuses it){hint}")

    def _escape(self, in_class: bool) -> str:
        pattern = self.pattern
        if self.index + 1 >= len(pattern):
            raise self.refuse("\\ at the end of the pattern")
        letter = pattern[self.index + 1]
        self.index += 2
        if letter in _CLASS_BODIES:
            body = _CLASS_BODIES[letter]
            return body if in_class else f"[{body}]"
        if letter.lower() in _CLASS_BODIES:  # \D \W \S outside a class; in one, `_class` handles them
            return f"[^{_CLASS_BODIES[letter.lower()]}]"
        if letter == "b" and not in_class:  # between JavaScript's (ASCII) word characters
            return "(?a:\\b)"
        if letter == "B" and not in_class:  # Python's \B never matches in an empty answer; JavaScript's does
            return "(?:(?a:\\B)|\\A\\Z)"
        if letter in _NOT_ANCHORS:
            meant = _NOT_ANCHORS[letter]
            hint = f"; for the {'start' if meant == '^' else 'end'} of the answer write {meant}" if meant else ""
            raise self.refuse(f"\\{letter} is not an anchor or escape in JavaScript: AgentV's RegExp reads it as the "
                              f"letter {letter!r}{hint}")
        if letter in "123456789" and not in_class:
            return self._backreference(letter)
        if letter == "k" and not in_class:
            name = _GROUP_NAME.match(pattern, self.index)
            if name and name.group(1) in self.names:
                self.index = name.end()
                return self._reference_to(self.names.index(name.group(1)) + 1)
            if self.unicode or any(self.names):
                raise self.refuse("\\k names no group of the pattern (JavaScript's RegExp refuses it)")
            return "k"  # without named groups or u, JavaScript reads `\k` as the letter
        if letter == "c" and self.index < len(pattern) and pattern[self.index].isascii() and pattern[self.index].isalpha():
            self.index += 1
            return re.escape(chr(ord(pattern[self.index - 1]) % 32))
        if letter == "u" and pattern.startswith("{", self.index):
            return self._code_point()
        pair = _ESCAPED_PAIR.match(pattern, self.index - 1) if self.unicode else None  # `u` and a pair only
        if pair:  # with u or v, `\ud83d\ude00` is the one character U+1F600, as the answer holds it
            self.index = pair.end()
            return re.escape(chr(0x10000 + ((int(pair.group(1), 16) - 0xD800) << 10) + int(pair.group(2), 16) - 0xDC00))
        escapable = _SET_PUNCTUATORS if self.sets else "-"  # in a class, besides the syntax characters
        if self.unicode and letter == "0" and pattern[self.index:self.index + 1].isdigit():
            raise self.refuse("an octal escape (\\0 and a digit) is not valid with the u or v flag (JavaScript's RegExp "
                              "refuses it)")
        if self.unicode and not letter.isalnum() and letter not in _SYNTAX and not (in_class and letter in escapable):
            raise self.refuse(f"\\{letter} is not a valid escape with the u or v flag (JavaScript's RegExp refuses it)")
        return "\\" + letter

    def _code_point(self) -> str:
        """`\\u{1F600}`: with u or v, the character with that code point; without either, JavaScript reads
        the letter u and the text "{1F600}", which is surely not what was meant, so it is refused."""
        braced = re.match(r"\{([0-9A-Fa-f]+)\}", self.pattern[self.index:])
        if not self.unicode:
            raise self.refuse("\\u{...} spells a character only with the u or v flag: without one JavaScript reads the "
                              "letter u and the text {...} (add `u` to `flags:`)")
        if braced is None or int(braced.group(1), 16) > 0x10FFFF:
            raise self.refuse("\\u{...} must hold a code point in hexadecimal, at most 10FFFF (JavaScript's RegExp "
                              "refuses it)")
        self.index += braced.end()
        return re.escape(chr(int(braced.group(1), 16)))

    def _backreference(self, first: str) -> str:
        """`\\N`: a reference to group N when the pattern has N groups; else, as web browsers read it
        (without u or v), a legacy octal escape, or the digit itself for 8 and 9."""
        digits = first + re.match(r"\d*", self.pattern[self.index:]).group(0)  # type: ignore[union-attr]
        if int(digits) <= len(self.names):
            self.index += len(digits) - 1
            return self._reference_to(int(digits))
        if self.unicode:
            raise self.refuse(f"\\{digits} refers to a group the pattern does not have (JavaScript's RegExp refuses it)")
        if first in "89":
            return first
        octal = re.match(r"[0-3][0-7]{0,2}|[4-7][0-7]?", first + self.pattern[self.index:])
        assert octal is not None
        self.index += len(octal.group(0)) - 1
        return f"\\x{int(octal.group(0), 8):02x}"

    def _reference_to(self, number: int) -> str:
        """JavaScript matches a reference to a group that has not matched (not yet closed, or skipped) with
        the empty string, where Python fails it; a Python conditional spells that."""
        self.referenced.add(number)
        if number not in self.closed:
            return "(?:)"
        return f"(?({number})\\{number}|)"

    def _class(self) -> str:
        """A character class, as JavaScript reads it: `[]` matches nothing and `[^]` anything; `\\D`, `\\W`
        and `\\S` inside one (which Python cannot spell as JavaScript's sets there) become an alternation."""
        pattern = self.pattern
        self.index += 1
        negated = pattern.startswith("^", self.index)
        if negated:
            self.index += 1
        items: list[str] = []
        complements: list[str] = []
        while True:
            if self.index >= len(pattern):
                raise self.refuse("a character class is not closed with ]")
            char = pattern[self.index]
            if char == "]":
                self.index += 1
                break
            if char == "\\":
                letter = pattern[self.index + 1:self.index + 2]
                if letter in ("D", "W", "S"):
                    complements.append(f"[^{_CLASS_BODIES[letter.lower()]}]")
                    self.index += 2
                    continue
                if letter == "b":
                    items.append("\\x08")
                    self.index += 2
                    continue
                items.append(self._escape(in_class=True))
                continue
            if self.sets:
                self._check_set_syntax(char, at_edge=not items and not complements or pattern[self.index + 1:][:1] == "]")
            items.append("\\" + char if char in "[&~|" else char)
            self.index += 1
        alternatives = ([f"[{''.join(items)}]"] if items else []) + complements
        if not alternatives:
            return _ANY if negated else "(?!)"
        if not complements:
            return f"[{'^' if negated else ''}{''.join(items)}]"
        either = "|".join(alternatives)
        return f"(?:(?!{either}){_ANY})" if negated else f"(?:{either})"

    def _check_set_syntax(self, char: str, at_edge: bool) -> None:
        """With the v flag a class is a set expression: its operators and nested classes are not run here,
        and what JavaScript refuses there (a lone `-`, `(`, `|`, a doubled punctuator) is refused."""
        pair = self.pattern[self.index:self.index + 2]
        if char == "[" or pair in ("&&", "--"):
            raise self.refuse("set operations and nested classes of the v flag are not supported here")
        if char in "(){}/|" or (char == "-" and at_edge) or (len(pair) == 2 and pair[0] == pair[1]
                                                            and pair[0] in _DOUBLED):
            raise self.refuse(f"{pair if pair[:1] == pair[1:] else char!r} must be escaped in a class with the v flag "
                              "(JavaScript's RegExp refuses it)")


def _capturing_groups(pattern: str) -> list[str]:
    """The name of each capturing group of a JavaScript pattern in order ("" for an unnamed one), so a
    reference can tell a group from an octal escape before the group is reached."""
    names: list[str] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            index += 2 if pattern.startswith("^", index + 1) else 1
            in_class = not pattern.startswith("]", index)  # `[]` and `[^]` end at once in JavaScript
            index += not in_class
            continue
        elif char == "(":
            name = _GROUP_NAME.match(pattern, index + 2) if pattern.startswith("?<", index + 1) else None
            if not pattern.startswith("?", index + 1) or name:
                names.append(name.group(1) if name else "")
        index += 1
    return names
