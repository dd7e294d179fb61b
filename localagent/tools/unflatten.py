"""A Python block written on one line, as the lines it stands for.

Qwen2.5-Coder-1.5B planned "write_file mathx/divide.py with the following content: def
divide(a, b): if b == 0: raise ValueError('Cannot divide by zero') return a / b" and then
wrote exactly that, one line, until the loop guard stopped it: told "invalid syntax", it
sent the same content again and again. The line is read with Python's own tokenizer and
split where a statement can only begin: after a block's header colon, and at a keyword
that starts a statement (`return`, `raise`, `if ...:`, `else:`, ...) outside brackets.

A statement after a `return`, `raise`, `pass`, `break` or `continue` closes the block
that statement ended (code after it in the same block would never run); an `else:`,
`elif ...:`, `except ...:` or `finally:` goes back to the header it belongs to. Anything
else that would have to guess the block a statement belongs to (a statement after a
plain one inside a nested block: the loop's body, or after it?) gives None, as does a
comment (it may hold the rest of the line), and so does a result that does not compile.
"""

from __future__ import annotations

import io
import keyword
import tokenize
from typing import NamedTuple

INDENT = "    "
_HEADERS = frozenset(
    {
        *("def", "class", "async", "with"),
        *("if", "elif", "else", "for", "while", "try", "except", "finally"),
    }
)
_CLAUSES = {  # a clause keyword: the headers it may follow
    "else": ("if", "elif", "for", "while", "try", "except"),
    "elif": ("if", "elif"),
    "except": ("try", "except"),
    "finally": ("try", "except", "else"),
}
_ENDS_BLOCK = frozenset({"return", "raise", "pass", "break", "continue"})
_SIMPLE = frozenset({"assert", "del", "global", "nonlocal"}) | _ENDS_BLOCK
_SKIPPED = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
_OPENERS, _CLOSERS = "([{", ")]}"


class _Token(NamedTuple):
    kind: int
    text: str
    start: int
    end: int


def lines(line: str) -> str | None:
    """The line as the indented lines it stands for (no trailing newline, the first
    line's indentation kept), or None when it is not one flattened block."""
    base = line[: len(line) - len(line.lstrip())]
    tokens = _tokens(line.strip())
    if tokens is None:
        return None
    statements = _statements(tokens, line.strip())
    if statements is None or len(statements) < 2:
        return None
    if len(statements) == 2 and statements[0][1].endswith(":"):  # `header: body` compiles
        return None
    laid = _levels(statements)
    if laid is None:
        return None
    text = "\n".join(f"{base}{INDENT * level}{body}" for level, body in laid)
    try:
        compile(text.strip() if not base else _dedented(text, base), "<line>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text


def _dedented(text: str, base: str) -> str:
    """The lines without the first line's indentation, so they compile on their own
    (`return` inside a def body still needs its def: one wrapped around them)."""
    body = "\n".join(line[len(base) :] for line in text.splitlines())
    return "def _outer():\n" + "\n".join(INDENT + line for line in body.splitlines()) + "\n"


def _tokens(text: str) -> list[_Token] | None:
    try:
        found = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    tokens = []
    for token in found:
        if token.type == tokenize.COMMENT or token.type == tokenize.ERRORTOKEN:
            return None
        if token.type in _SKIPPED:
            continue
        if token.start[0] != 1 or token.end[0] != 1:
            return None  # a string over several lines: not one line
        tokens.append(_Token(token.type, token.string, token.start[1], token.end[1]))
    return tokens


def _starts(tokens: list[_Token], at: int, first: _Token) -> bool:
    """Whether the keyword at `at` (outside brackets, not a statement's first token)
    begins a statement of its own."""
    word = tokens[at].text
    if word in _SIMPLE or word in ("def", "class", "while", "with", "try", "async", "for"):
        return True
    if word == "import":
        return first.text != "from"
    if word == "from":  # `from X import y`, not `yield from g()` or `raise E from None`
        return tokens[at - 1].text not in ("yield", "raise") and _imports_next(tokens, at + 1)
    if word in ("else", "finally"):
        return at + 1 < len(tokens) and tokens[at + 1].text == ":"
    if word in ("if", "elif", "except"):
        return _colon_before_else(tokens, at + 1)
    return False


def _imports_next(tokens: list[_Token], at: int) -> bool:
    """Whether the tokens from `at` are a module's name, dotted or relative, then `import`."""
    named = False
    for token in tokens[at:]:
        if token.text == "import":
            return named
        if token.text != "." and token.kind != tokenize.NAME:
            return False
        named = True
    return False


def _colon_before_else(tokens: list[_Token], at: int) -> bool:
    """Whether a `:` outside brackets comes before any `else` (an `if` that is a
    statement, not the middle of `a if b else c`)."""
    depth = 0
    for token in tokens[at:]:
        if token.text in _OPENERS:
            depth += 1
        elif token.text in _CLOSERS:
            depth -= 1
        elif depth == 0 and token.text == "else":
            return False
        elif depth == 0 and token.text in (":", "lambda"):
            return token.text == ":"
    return False


def _statements(tokens: list[_Token], text: str) -> list[tuple[str, str]] | None:
    """The line's statements in order: (the keyword it begins with or "", its text)."""
    found: list[tuple[str, str]] = []
    begin, depth = 0, 0
    for at, token in enumerate(tokens):
        first = tokens[begin]
        header = first.text in _HEADERS and first.kind == tokenize.NAME
        if token.text in _OPENERS:
            depth += 1
        elif token.text in _CLOSERS:
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and at > begin and _is_keyword(token) and _starts(tokens, at, first):
            found.append((_word(first), text[first.start : tokens[at - 1].end].rstrip()))
            begin = at
        elif depth == 0 and header and token.text == ":" and at + 1 < len(tokens):
            found.append((_word(first), text[first.start : token.end]))
            begin = at + 1
    if depth != 0:
        return None
    first = tokens[begin]
    found.append((_word(first), text[first.start :].rstrip()))
    return found


def _is_keyword(token: _Token) -> bool:
    return token.kind == tokenize.NAME and keyword.iskeyword(token.text)


def _word(token: _Token) -> str:
    return token.text if _is_keyword(token) else ""


def _levels(statements: list[tuple[str, str]]) -> list[tuple[int, str]] | None:
    """Each statement with its depth, or None where the depth would be a guess."""
    laid: list[tuple[int, str]] = []
    open_blocks: list[str] = []  # the headers whose blocks are open, outermost first
    ended = False  # the statement before ended its block (return, raise, ...)
    for word, body in statements:
        is_header = body.endswith(":") and word in _HEADERS
        if word in _CLAUSES:
            while open_blocks and open_blocks[-1] not in _CLAUSES[word]:
                open_blocks.pop()
            if not open_blocks:
                return None
            open_blocks.pop()
        elif ended and open_blocks:
            open_blocks.pop()
        elif laid and not laid[-1][1].endswith(":") and len(open_blocks) > 1:
            return None  # after a plain statement in a nested block: which block?
        laid.append((len(open_blocks), body))
        if is_header:
            open_blocks.append("def" if word == "async" else word)
        ended = word in _ENDS_BLOCK
    if laid[-1][1].endswith(":"):
        return None
    return laid
