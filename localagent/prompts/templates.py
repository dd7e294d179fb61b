"""Prompt templates: `{name}` placeholders, checked whole before a run, filled in one pass.

A template is plain text with `{name}` placeholders; `{{` and `}}` are literal braces.
`check` finds every problem at once, each with its line: a required placeholder that is
missing, an unknown one (a typo), a conversion (`{a!r}`), a format spec (`{a:>10}`),
attribute or index access (`{a.b}`, `{a[0]}`), a brace that opens or closes nothing
(literal JSON such as `{"ok": true}`), and a doubled `{{name}}` that would show the
text `{name}` instead of the value. `render` inserts each value as it is, in one pass,
so a value that holds braces is never read as a template.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

_TOKEN = re.compile(r"\{\{|\}\}|\{[^{}\n]*\}|\{|\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPED_NAME = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
_KIND = {
    "!": "a conversion",
    ":": "a format spec",
    ".": "attribute access",
    "[": "index access",
}


@dataclass(frozen=True)
class Spec:
    """What a prompt's template may hold.

    `volatile` names values that change between rounds; `prefix` marks a template sent
    in front of the whole history, where such a value would defeat the KV cache."""

    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    volatile: frozenset[str] = frozenset()
    prefix: bool = False

    @property
    def names(self) -> frozenset[str]:
        return self.required | self.optional


@dataclass(frozen=True)
class Problem:
    where: str  # the file, or the config table and the prompt's name
    line: int  # 1-based; 0 when the problem is the template as a whole
    message: str
    warning: bool = False

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}" if self.line else self.where
        return f"{at}: {'warning: ' if self.warning else ''}{self.message}"


@dataclass(frozen=True)
class Field:
    name: str
    line: int


@dataclass
class Scan:
    """A template cut into literal text and fields, with what was wrong in it."""

    parts: list[str | Field] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line, message)
    intended: dict[str, int] = field(default_factory=dict)  # names in bad fields: their line
    escaped: dict[str, int] = field(default_factory=dict)  # `{{name}}`: its line


def scan(text: str) -> Scan:
    found = Scan()
    pos, line = 0, 1
    for m in _TOKEN.finditer(text):
        literal = text[pos : m.start()]
        line += literal.count("\n")
        _add_text(found, literal)
        token = m.group()
        if token == "{{":
            if (escaped := _ESCAPED_NAME.match(text, m.start())) is not None:
                found.escaped.setdefault(escaped.group(1), line)
            _add_text(found, "{")
        elif token == "}}":
            _add_text(found, "}")
        elif token == "{":
            found.errors.append((line, _LONE_OPEN))
        elif token == "}":
            found.errors.append((line, _LONE_CLOSE))
        else:
            _add_field(found, token[1:-1], line)
        pos = m.end()
    _add_text(found, text[pos:])
    return found


_LONE_OPEN = (
    "a '{' that opens no placeholder on this line; a literal brace (as in JSON) is "
    "written doubled: '{{'"
)
_LONE_CLOSE = "a '}' that closes no placeholder; a literal brace is written doubled: '}}'"


def _add_text(found: Scan, text: str) -> None:
    if not text:
        return
    if found.parts and isinstance(found.parts[-1], str):
        found.parts[-1] += text
    else:
        found.parts.append(text)


def _add_field(found: Scan, raw: str, line: int) -> None:
    m = _NAME.match(raw)
    name = m.group() if m else ""
    rest = raw[len(name) :]
    if name and not rest:
        found.parts.append(Field(name, line))
        return
    if name and rest[0] in _KIND:
        found.intended.setdefault(name, line)
        hint = " (if it is literal text, double its braces)" if rest[0] == ":" else ""
        found.errors.append(
            (
                line,
                f"{{{raw}}} uses {_KIND[rest[0]]} ({rest}), which is not supported: values "
                f"are inserted as they are; write {{{name}}}{hint}",
            )
        )
        return
    if _NAME.fullmatch(raw.strip()):
        found.intended.setdefault(raw.strip(), line)
        found.errors.append((line, f"{{{raw}}}: write {{{raw.strip()}}}, without spaces"))
        return
    shown = "{" + raw + "}"
    found.errors.append(
        (
            line,
            f"{shown} is not a placeholder (a placeholder is {{name}}); if it is literal "
            f"text such as JSON, double its braces: {{{shown}}}",
        )
    )


def check(text: str, spec: Spec, where: str, elsewhere: Mapping[str, str] = {}) -> list[Problem]:
    """Every problem of `text` as a template for `spec`.

    `elsewhere` maps placeholder names of other prompts to those prompts' names, so a
    value used in the wrong prompt is named as such rather than as a typo."""
    if not text.strip():
        return [Problem(where, 0, "the prompt is empty; remove it to use the default")]
    found = scan(text)
    problems = [Problem(where, line, message) for line, message in found.errors]
    used: dict[str, int] = {}
    for part in found.parts:
        if isinstance(part, Field):
            if part.name in spec.names:
                used.setdefault(part.name, part.line)
            else:
                problems.append(Problem(where, part.line, _unknown(part.name, spec, elsewhere)))
    for name, line in found.intended.items():
        if name not in spec.names:
            problems.append(Problem(where, line, _unknown(name, spec, elsewhere)))
    for name in sorted(spec.required - used.keys() - found.intended.keys()):
        if name in found.escaped:
            message = (
                f"{{{{{name}}}}} is a literal (doubled braces) and shows the text {{{name}}}, "
                f"not the value; the required placeholder {{{name}}} is missing: write {{{name}}}"
            )
            problems.append(Problem(where, found.escaped[name], message))
        else:
            problems.append(Problem(where, 0, f"the required placeholder {{{name}}} is missing"))
    for name, line in sorted(found.escaped.items(), key=lambda item: item[1]):
        if name in spec.names and (name in used or name not in spec.required):
            message = f"{{{{{name}}}}} shows the text {{{name}}}, not the value: write {{{name}}}"
            problems.append(Problem(where, line, message, warning=True))
    problems += _cache_warnings(spec, used, where)
    return sorted(problems, key=lambda p: (p.line, p.warning))


def _unknown(name: str, spec: Spec, elsewhere: Mapping[str, str]) -> str:
    takes = ", ".join(f"{{{n}}}" for n in sorted(spec.names)) or "no placeholders"
    if name in elsewhere:
        return (
            f"{{{name}}} is a value of the {elsewhere[name]} prompt, not of this one "
            f"(it takes {takes})"
        )
    close = difflib.get_close_matches(name, sorted(spec.names), n=1, cutoff=0.6)
    if close:
        return f"unknown placeholder {{{name}}}: did you mean {{{close[0]}}}? (it takes {takes})"
    return f"unknown placeholder {{{name}}} (it takes {takes})"


def _cache_warnings(spec: Spec, used: Mapping[str, int], where: str) -> list[Problem]:
    """A value that changes between rounds, in a template sent before the history, makes
    the server recompute everything after it every round."""
    if not spec.prefix:
        return []
    return [
        Problem(
            where,
            line,
            f"{{{name}}} changes between rounds and this prompt comes before the history: "
            "the model server cannot reuse its cache past it, so every round is slower; "
            "the probe prompt (sent last) is the place for it",
            warning=True,
        )
        for name, line in sorted(used.items(), key=lambda item: item[1])
        if name in spec.volatile
    ]


@functools.lru_cache(maxsize=128)
def _parts(text: str) -> tuple[str | Field, ...]:
    found = scan(text)
    if found.errors:
        line, message = found.errors[0]
        raise ValueError(f"template line {line}: {message}")
    return tuple(found.parts)


def placeholders(text: str) -> set[str]:
    """The names of the placeholders of a template that scans without errors."""
    return {part.name for part in _parts(text) if isinstance(part, Field)}


def render(text: str, values: Mapping[str, object]) -> str:
    """The template with each placeholder replaced by its value, as it is, in one pass.

    A placeholder without a value raises: a missing value is a bug, not an empty string."""
    out = []
    for part in _parts(text):
        if isinstance(part, str):
            out.append(part)
        elif part.name in values:
            out.append(str(values[part.name]))
        else:
            raise KeyError(f"no value for the placeholder {{{part.name}}} (line {part.line})")
    return "".join(out)


class Prompt(NamedTuple):
    text: str
    about: str
    spec: Spec


def spec(required: str = "", optional: str = "", volatile: str = "", prefix: bool = False) -> Spec:
    return Spec(
        frozenset(required.split()),
        frozenset((optional + " " + volatile).split()),
        frozenset(volatile.split()),
        prefix,
    )
