"""What a script's run shows, beyond its exit code: whether the output holds anything
of the program's own, and whether the files it was given exist.

Qwen2.5-Coder-1.5B ran `python rps_game.py` with stdin "rock": exit code 0, and the
only output was the game's own prompt, "Enter your choice (rock, paper, or scissors): ":
`play_game()` returned the result and the `__main__` block dropped it. It ran
`python wordcount.py --lines file.txt` in a workspace with no file.txt: exit code 0,
"0". Each run was taken as showing the program works, and each goal ended "completed
(verified)" with a broken program. Such a run proves nothing: the run says why, and so
does its observation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from localagent.tools import pyscript
from localagent.tools.cmdline import PYTHON_OPTIONS, is_python, split_command

_FILE_ARG = re.compile(r"[\w.\\/-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}")
# The goal's own name for a file argument: "python wordcount.py FILE prints the number of
# lines ... in FILE". Qwen2.5-Coder-1.5B ran `python wordcount.py FILE` with its program
# counting stdin: exit code 0, "0 0 0", and the goal ended "completed (verified)".
_PLACEHOLDER = re.compile(r"[A-Z_]*(?:FILE|PATH)[A-Z_0-9]*")
_HELP = frozenset({"-h", "--help"})


def script_words(cmd: str) -> list[str]:
    """`python X.py ARGS...` as [X.py, ARGS...] ([] for any other command)."""
    try:
        words = [w for w in split_command(cmd) if w not in PYTHON_OPTIONS]
    except ValueError:
        return []
    if len(words) < 2 or not words[1].lower().endswith(".py") or not is_python(words[0]):
        return []
    return words[1:]


def own_output(output: str, script: pyscript.Script | None) -> str:
    """The output without the prompts the script's input() calls show."""
    for prompt in sorted(script.prompts if script is not None else [], key=len, reverse=True):
        if prompt.strip():
            output = output.replace(prompt, "")
    return output


def missing_inputs(root: Path, words: list[str]) -> list[str]:
    """The files a script was given as arguments that do not exist (after the run: one
    it writes is no input)."""
    missing = []
    for word in words[1:]:
        if word.startswith("-") or not (_FILE_ARG.fullmatch(word) or _PLACEHOLDER.fullmatch(word)):
            continue
        path = Path(word)
        if not (path if path.is_absolute() else root / path).exists():
            missing.append(word)
    return missing


_SAMPLES = {
    ".csv": "name,count\napples,3\npears,5\n",
    ".json": '{"name": "sample", "count": 3}\n',
}
SAMPLE_TEXT = "the quick brown fox\njumps over the lazy dog\n"


def sample_file(word: str) -> tuple[str, str]:
    """The file to write for a missing input the run was given: its path (sample.txt for
    the goal's own placeholder, `FILE`) and a small content of its kind."""
    path = "sample.txt" if _PLACEHOLDER.fullmatch(word) else word
    return path, _SAMPLES.get(Path(path).suffix.lower(), SAMPLE_TEXT)


# Names of files that are a program's input (a goal's placeholder aside): sample.txt,
# test.txt, input.csv, data.json.
_INPUT_NAMES = re.compile(r"(?:sample|test|example|input|data)\w*\.(?:txt|csv|json|md|log)", re.I)


def input_words(cmd: str) -> list[str]:
    """The arguments of `python X.py ...` that name its input: the goal's placeholder
    (`FILE`) or a file named as a sample or input (`sample.txt`, `input.csv`)."""
    words = script_words(cmd)
    return [w for w in words[1:] if _PLACEHOLDER.fullmatch(w) or _INPUT_NAMES.fullmatch(w)]


def on_samples(cmd: str, missing: list[str]) -> str:
    """`cmd` (or a run step's text) with each of the `missing` words it names as the
    sample file written for it (the goal's placeholder: sample.txt)."""
    words = cmd.split(" ")
    return " ".join(sample_file(w)[0] if w in missing else w for w in words)


NEVER_OPENS = "its code never opens"  # how a run's `unproven` fact says `unopened` found one


def unopened(root: Path, words: list[str], script: pyscript.Script) -> list[str]:
    """The existing files a script was given that its code cannot have read: it opens
    no file and hands no path to anything that would ([] when it may have). Qwen2.5-
    Coder-1.5B's wordcount.py counted sys.stdin, another the characters of its argument's
    name; run on a file, each printed numbers."""
    if script.opens:
        return []
    given = []
    for word in words[1:]:
        path = Path(word)
        if _FILE_ARG.fullmatch(word) and (path if path.is_absolute() else root / path).is_file():
            given.append(word)
    return given


def usage_only(words: list[str], output: str) -> bool:
    """Whether the run asked only for the usage (`--help`) and printed it: argparse's own
    text, nothing of the program's. Qwen2.5-Coder-1.5B's wordcount.py counted the
    characters of its argument's name; its `--help` run ended the goal "completed
    (verified)"."""
    asked = words[1:]
    return bool(asked) and set(asked) <= _HELP and output.lstrip().lower().startswith("usage:")


_CHOICES = re.compile(r"\(([^()]*?\w[^()]*?)\)|\[([^\[\]]*?\w[^\[\]]*?)\]")
_LISTED = re.compile(r"\b([\w-]+)(?:,\s*[\w-]+)*,?\s+(?:or|/)\s+[\w-]+")
_NUMBER = re.compile(r"\b(?:number|age|count|how many|amount|integer)\b", re.I)
_AGAIN = re.compile(r"\b(?:again|another|continue|more)\b", re.I)
_ENDS = ("n", "no", "q", "quit", "exit", "stop")
_QUITS = ("q", "quit", "exit")


def sample_input(output: str) -> str:
    """An answer to the input prompt a run that got no input ended on ("Enter your choice
    (rock, paper, or scissors): " gives "rock\\n"): the first choice it offers (the one
    that stops, asked whether to go on), else 1 for a number, else "test". Qwen2.5-Coder-
    1.5B ran its game without stdin until three strikes, told only the example `python
    game.py` with "rock"; a call it can copy names its own."""
    before = output.split("EOFError", 1)[0].split("Traceback (most recent call last)", 1)[0]
    lines = [line for line in before.splitlines() if line.strip()]
    return answer(lines[-1] if lines else "") + "\n"


def sample_answers(prompts: list[str]) -> str:
    """One answer to each input() prompt a script's code shows, in order, each a line:
    the nth of the choices the nth offers, so two players' moves differ ("rock", then
    "paper": a game with a result, not a tie); then the choice that quits, where a prompt
    offers one ("rock, paper, scissors or quit"), so a game that asks in a loop ends."""
    lines = [answer(prompt, nth) for nth, prompt in enumerate(prompts or [""])]
    quits = [o for p in prompts for o in _choices(p) if o.lower() in _QUITS]
    return "".join(f"{line}\n" for line in [*lines, *quits[:1]])


def answer(prompt: str, nth: int = 0) -> str:
    """An answer to `prompt` (see `sample_input`): of the choices it offers, the nth."""
    offered = _choices(prompt)
    if offered and _AGAIN.search(prompt):
        return next((o for o in offered if o.lower() in _ENDS), offered[0])
    if offered:
        return offered[nth % len(offered)]
    return "1" if _NUMBER.search(prompt) else "test"


def _choices(prompt: str) -> list[str]:
    """The answers a prompt offers: in brackets ("(rock/paper/scissors)", "[y/n]"), else
    listed ("rock, paper, or scissors")."""
    found = [f[1] or f[2] for f in _CHOICES.finditer(prompt)]
    found += [f[0] for f in _LISTED.finditer(prompt)]
    for text in found:
        words = [w for w in (w.strip(" '\"") for w in re.split(r",|/|\bor\b|\|", text)) if w]
        if words and all(len(w) <= 20 for w in words):
            return words
    return []


def dropped_fix(path: str, script: pyscript.Script) -> tuple[str, dict[str, object]] | None:
    """The first call whose result the script drops, and the edit that prints it."""
    if not script.dropped:
        return None
    name, line = script.dropped[0]
    indent = line[: len(line) - len(line.lstrip())]
    new = f"{indent}print({line.strip()})" + ("\n" if line.endswith("\n") else "")
    return name, {"name": "replace_in_file", "arguments": {"path": path, "old": line, "new": new}}


def fix_text(path: str, script: pyscript.Script | None) -> str:
    """The sentence that names a dropped result and its fix, ready to copy ("" if none)."""
    found = dropped_fix(path, script) if script is not None else None
    if found is None:
        return ""
    name, call = found
    return f" {name}() returns its result, but the call drops it; to print it, send: " + (
        json.dumps(call)
    )
