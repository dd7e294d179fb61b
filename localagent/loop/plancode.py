"""A plan's write step that holds code, as the step it stands for: the file and what goes
in it, the code left to the write (`as_write`)."""

from __future__ import annotations

import re

from localagent.loop.subtasks import written_file
from localagent.tools.pyscript import TEST_FILE

# Where a step's code starts: a quote before code, a fence, or code.
_CODE_STARTS = (
    re.compile(r"""['"`]\s*(?:def |class |import \w|from [\w.]+ import |print\(|return |raise )"""),
    re.compile(r"```|~~~"),
    re.compile(r"(?<![\w.])(?:def |class |import \w|from [\w.]+ import |print\(|if __name__)"),
)
# What leads into the code: "with the following content:", "with the content", "as follows".
_LEAD = re.compile(
    r"\s*,?\s*(?:(?:with|containing|using|holding)\s+(?:(?:the|this|its)\s+)?(?:following\s+)?"
    r"(?:content|contents|code|lines|text)?|as\s+follows)?\s*:?\s*$",
    re.I,
)
_DEFINED = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)")
# A line that is only a fence, its language named or not ("```python", "```").
BARE_FENCE = re.compile(r"\s*(?:```|~~~)[\w+-]*\s*")


def as_write(text: str) -> str:
    """The write step a step with code stands for ("write_file mathx/divide.py with the
    code of divide"), or "" when the words before its code name no one file to write."""
    starts = [found.start() for pattern in _CODE_STARTS if (found := pattern.search(text))]
    if not starts:
        return ""
    before = _LEAD.sub("", text[: min(starts)])
    path = written_file(before) if before.strip() else ""
    if not path:
        return ""
    if TEST_FILE.search(path):
        return f"write_file {path} with its tests"
    code = text[min(starts) :]
    if line := _one_line(code):
        return f"write_file {path} with `{line}`"
    names = list(dict.fromkeys(_DEFINED.findall(code)))
    what = f"the code of {', '.join(names)}" if names else "its code"
    return f"write_file {path} with {what}"


def _one_line(code: str) -> str:
    """The step's code when it is one line that compiles (`print("Hello, World!")` in a
    fence), else ""."""
    lines = [line for line in code.strip().strip("`'\"~").splitlines() if line.strip()]
    # a fence, or the language its stripped backticks left ("python")
    lines = [line for line in lines if not re.fullmatch(r"\s*(?:```|~~~)?\w*\s*", line)]
    if len(lines) != 1 or "`" in lines[0] or not _compiles(lines[0].strip()):
        return ""
    return lines[0].strip()


# "write_file hello_world.py with the text 'Hello, world!'": a Python file and words for it.
_TEXT_WRITE = re.compile(
    r"(write_file\s+\S+\.pyw?)\s+(?:with|containing)\s+(?:the\s+)?(?:following\s+)?"
    r"(?:text|content|contents|message|string|words|line)\s*:?\s*(.+?)\s*",
    re.I,
)
_QUOTED = re.compile(r"""(['"])(.+)\1""")
_ECHO = re.compile(r"""\becho\s+(['"])(.+?)\1""")  # a shell's print: `#!/bin/bash echo 'Hi'`


def as_print(text: str) -> str:
    """A write step of a Python file whose content, as the step gives it, is words in
    quotes that are no Python, or a shell's `echo` of them: the step of a script that
    prints them ("write_file hello_world.py that prints 'Hello, world!'"); else the step.
    Qwen2.5-Coder-0.5B planned "write_file hello_world.py with the text 'Hello, world!'"
    and wrote those words as the file (3 of 16 hello runs on the CPU), or "... with the
    following content: #!/bin/bash echo 'Hello, world!''", a comment in Python (2 more)."""
    found = _TEXT_WRITE.fullmatch(text.strip())
    said = found[2].rstrip(".") if found else ""
    words = _ECHO.search(said) or _QUOTED.fullmatch(said)
    if found is None or words is None or not words[2].strip() or _compiles(words[2]):
        return text
    quote = '"' if "'" in words[2] else "'"
    return f"{found[1]} that prints {quote}{words[2]}{quote}"


def _compiles(code: str) -> bool:
    try:
        compile(code, "<subtask>", "exec")  # parsed only, never run
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
