"""The prompts of a run: the defaults, replaced by the user's from the config file's
`[prompts]` table or a folder given with `--prompts DIR`, each checked before a run.

A folder holds one file per prompt, `NAME.txt` or `NAME.md` (UTF-8; one trailing
newline, which editors add, is not part of the prompt). Files with other endings,
`README.*` and subfolders are ignored; any other `.txt`/`.md` name is an error, so a
misspelt file name is not silently left out.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from localagent.prompts.templates import Problem, check, render
from localagent.prompts.texts import PROMPTS
from localagent.system import safefs
from localagent.system.errors import UsageError

SUFFIXES = (".txt", ".md")
MAX_BYTES = 64 * 1024
SMALL = "_small"  # the suffix of a prompt's variant for the small-model profile


class PromptSet:
    """The texts a run sends: the defaults with the user's replacements (checked).

    In the small-model profile a prompt with a `NAME_small` variant is sent as that
    variant, unless the user replaced NAME and not the variant: a replacement is never
    silently passed over."""

    def __init__(self, replaced: Mapping[str, str] | None = None, small: bool = False) -> None:
        replaced = replaced or {}
        self.texts = {name: prompt.text for name, prompt in PROMPTS.items()}
        self.texts.update(replaced)
        if small:
            for name in PROMPTS:
                variant = name + SMALL
                if variant in PROMPTS and (variant in replaced or name not in replaced):
                    self.texts[name] = self.texts[variant]

    def render(self, name: str, /, **values: Any) -> str:
        return render(self.texts[name], values)


DEFAULT = PromptSet()


def _elsewhere() -> dict[str, str]:
    """Each placeholder name and a prompt that takes it (one sent last, if any)."""
    found: dict[str, str] = {}
    for name, prompt in sorted(PROMPTS.items(), key=lambda item: item[1].spec.prefix):
        for placeholder in sorted(prompt.spec.names):
            found.setdefault(placeholder, name)
    return found


def problems(texts: Mapping[str, Any], where: Callable[[str], str]) -> list[Problem]:
    """Every problem of these replacement prompts, `where(name)` naming each one's source."""
    found: list[Problem] = []
    elsewhere = _elsewhere()
    for name, text in texts.items():
        if name not in PROMPTS:
            found.append(Problem(where(name), 0, _unknown_prompt(name)))
        elif not isinstance(text, str):
            found.append(Problem(where(name), 0, "a prompt is a string of text"))
        else:
            found += check(text, PROMPTS[name].spec, where(name), elsewhere)
    return found


def _unknown_prompt(name: str) -> str:
    close = difflib.get_close_matches(name, list(PROMPTS), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"no prompt is named {name!r}; {hint}`localagent prompts list` names them all"


def fail_on_errors(found: list[Problem], source: str) -> None:
    errors = [p for p in found if not p.warning]
    if errors:
        count = f"{len(errors)} problem" + ("s" if len(errors) > 1 else "")
        lines = "\n".join(f"  {p}" for p in found)
        raise UsageError(f"the prompts in {source} have {count}; nothing was run:\n{lines}")


def from_table(table: Any, path: Path) -> dict[str, str]:
    """The `[prompts]` table of the config file, checked; raises UsageError."""
    if not isinstance(table, dict):
        raise UsageError(
            f"prompts in {path} is a [prompts] table of NAME = '''text''' entries; "
            "see `localagent prompts list`"
        )
    fail_on_errors(problems(table, lambda name: f"{path} [prompts] {name}"), str(path))
    return dict(table)


def read_folder(folder: Path) -> tuple[dict[str, str], list[Problem]]:
    """The prompt files of a folder and every problem with them (nothing raised)."""
    shown = str(folder)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        return {}, [Problem(shown, 0, f"cannot read the prompts folder: {exc.strerror or exc}")]
    texts: dict[str, str] = {}
    files: dict[str, Path] = {}
    found: list[Problem] = []
    for entry in entries:
        path = Path(entry.path)
        stem, suffix = path.stem, path.suffix.lower()
        if suffix not in SUFFIXES or stem.upper() == "README" or entry.is_dir():
            continue
        if stem in files:
            message = f"{files[stem].name} and {path.name} are both the {stem} prompt; keep one"
            found.append(Problem(str(path), 0, message))
            continue
        files[stem] = path
        text, problem = _read(folder, path)
        if problem:
            found.append(Problem(str(path), 0, problem))
        else:
            texts[stem] = text
    if not files and not found:
        found.append(Problem(shown, 0, "no prompt files (NAME.txt or NAME.md) in this folder"))
    found += problems(texts, lambda name: str(files[name]))
    return texts, found


def _read(folder: Path, path: Path) -> tuple[str, str]:
    """A prompt file's text, or why it cannot be one (a link that leads out of the
    folder is refused, never read: its text would go to the model server)."""
    home, real = os.path.realpath(folder), os.path.realpath(path)
    if os.path.commonpath([home, real]) != home:
        return "", f"is a link to {real}, outside the prompts folder; copy the file in instead"
    try:
        data = safefs.read_inside(folder, path, MAX_BYTES + 1)
    except safefs.UnsafeFile:
        return "", "not a regular file"
    except OSError as exc:
        return "", f"cannot be read: {exc.strerror or exc}"
    if len(data) > MAX_BYTES:
        return "", f"over {MAX_BYTES // 1024} KiB; a prompt that long is a mistake"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return "", f"is not UTF-8 text (byte {exc.start})"
    text = text.replace("\r\n", "\n")
    return text.removesuffix("\n"), ""


def load_folder(folder: Path) -> dict[str, str]:
    """The prompt files of `folder`, checked; raises UsageError naming every problem."""
    texts, found = read_folder(folder)
    fail_on_errors(found, str(folder))
    return texts


def warnings(texts: Mapping[str, str]) -> list[str]:
    """What a run should be told about its (valid) replacement prompts."""
    return [str(p) for p in problems(texts, lambda name: f"prompt {name}") if p.warning]


def listing() -> str:
    """Every prompt: its name, what it is, its placeholders (required ones first)."""
    rows = []
    for name, prompt in PROMPTS.items():
        spec = prompt.spec
        needs = " ".join(f"{{{n}}}" for n in sorted(spec.required))
        may = " ".join(f"{{{n}}}" for n in sorted(spec.optional - spec.required))
        places = f"requires {needs or 'nothing'}" + (f"; may use {may}" if may else "")
        rows.append(f"{name:<20} {prompt.about}\n{'':<20} {places}")
    return "\n".join(rows)


def show(name: str) -> str:
    if name not in PROMPTS:
        raise UsageError(_unknown_prompt(name))
    return PROMPTS[name].text


def check_report(folder: Path | None, config: Path, table: Any) -> tuple[str, int]:
    """The `prompts check` report and its exit code (0: usable, 2: problems); `table` is
    the config file's `[prompts]` table as written (None: it has none)."""
    if folder is None:
        if table is None:
            return f"no [prompts] table in {config}: the default prompts are used", 0
        if not isinstance(table, dict):
            return f"{config}: prompts is not a [prompts] table", 2
        found, source, count = problems(table, lambda n: f"{config} [prompts] {n}"), config, table
    else:
        texts, found = read_folder(folder)
        source, count = folder, texts
    errors = sum(not p.warning for p in found)
    lines = [str(p) for p in found]
    if errors:
        lines.append(f"{errors} problem{'s' if errors > 1 else ''} in {source}")
    else:
        lines.append(f"{len(count)} prompt{'s' if len(count) != 1 else ''} in {source}: usable")
    return "\n".join(lines), 2 if errors else 0
