"""What every tool shares: where it acts (`ToolContext`), what it returns (`ToolResult`)
and how it reports a mistake the model can correct (`ToolError`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.system.sandbox import CommandPolicy

if TYPE_CHECKING:
    from localagent.journal.outputstore import OutputStore, Stored

JOURNAL_DIR = ".agent_context"
BINARY_SNIFF_BYTES = 8192  # a NUL in a file's first bytes makes it binary


class Delegate(Protocol):
    """A coding agent the delegate tool may run, as the settings describe one (the
    config file's `[delegates.NAME]`)."""

    @property
    def command(self) -> tuple[str, ...]: ...
    @property
    def timeout_sec(self) -> float: ...
    @property
    def network(self) -> bool: ...
    @property
    def pass_env(self) -> tuple[str, ...]: ...
    @property
    def sandbox(self) -> bool: ...


def _never() -> bool:
    return False


@dataclass(frozen=True)
class ToolContext:
    """Where tools act and within which limits; `output_limit` caps every observation."""

    root: Path
    allowed_commands: tuple[str, ...] = ("python", "pytest", "ruff", "pip")
    output_limit: int = 6000
    max_timeout: float = 600.0
    search_seconds: float = 10.0  # the whole of one search_files or find_files call
    cancelled: Callable[[], bool] = _never  # true once the agent is asked to stop
    # The environment marker (process.MARKER_VARIABLE) of the call's processes, journaled
    # in `action_started` before any of them starts, so a crashed run's are found again.
    marker: str | None = None
    # Where an output longer than `output_limit` is kept whole (None: it is only cut), and
    # the id it gets: the seq of the action's `action_started` record (None: not stored).
    outputs: OutputStore | None = None
    output_id: int | None = None

    delegates: Mapping[str, Delegate] = dataclasses.field(default_factory=dict)  # by name
    # Commands' sandbox, network and environment (run_cmd, goal checks, delegate).
    commands: CommandPolicy = dataclasses.field(default_factory=CommandPolicy)
    prompts: PromptSet = DEFAULT  # the run's, for the notes a tool adds to its output
    # The small-model profile: write_file makes the one-line fix of a Python file's syntax
    # error itself when it is the only edit that makes the file compile, and a package
    # `__init__.py`'s self-import the import of its modules' functions (`mends.inits`);
    # replace_in_file refuses an edit that would leave a compiling Python file broken.
    mend_syntax: bool = False

    def __post_init__(self) -> None:
        # Against an unresolved root, a workspace reached via a symlink would look like an escape.
        object.__setattr__(self, "root", Path(self.root).resolve())


@dataclass(frozen=True)
class ToolResult:
    """An observation for the model; `returncode` is set by commands, `verdict` by
    mark_subtask_complete, `changed` when the workspace was modified."""

    ok: bool
    text: str
    changed: bool = False
    returncode: int | None = None
    verdict: tuple[bool, str] | None = None
    # What the call did, for the state and the evidence ledger: paths under "wrote",
    # "removed" and "read", commands under "ran". The loop reads these, not tool names.
    facts: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    output: Stored | None = None  # the whole output, stored, when `text` shows only part
    own: int | None = None  # where the tool's own text ends, when the loop's notes follow it

    @property
    def observed(self) -> str:
        """The tool's own observation: `text` without the loop's notes after it."""
        return self.text if self.own is None else self.text[: self.own]


class Words:
    """Marks a string parameter that holds several words quoted as on a command line
    (`Annotated[str, "what", WORDS]`): a list the model gives for it is joined that way."""


WORDS = Words()


class ToolError(Exception):
    """A mistake the model can correct; the message is the observation it reads.

    Made with `of`, it names a prompt (localagent/prompts/refusals*.py) and its values,
    rendered through the run's prompt set where it becomes the observation (`text`), so a
    user can replace its wording; a value that is itself a `ToolError.of` is rendered the
    same way (one part of a longer refusal). Made with a text, that text was rendered
    already. `str()` renders with the default prompts (for logs and the user's errors)."""

    def __init__(
        self, text: str = "", *, name: str = "", values: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(text or name)
        self.name, self.values = name, dict(values or {})

    @classmethod
    def of(cls, prompt: str, /, **values: object) -> ToolError:
        return cls(name=prompt, values=values)

    def text(self, prompts: PromptSet = DEFAULT) -> str:
        if not self.name:
            return str(self.args[0]) if self.args else ""
        return prompts.render(
            self.name, **{key: _part(v, prompts) for key, v in self.values.items()}
        )

    def __str__(self) -> str:
        return self.text()


def _part(value: object, prompts: PromptSet) -> object:
    return value.text(prompts) if isinstance(value, ToolError) else value


def clean(text: str) -> str:
    # NUL and lone surrogates break JSON encoders and prompt templates downstream.
    text = text.replace("\x00", "\ufffd")
    return text.encode("utf-8", errors="replace").decode("utf-8")


def describe(raw: str) -> str:
    return repr(raw) if len(raw) <= 120 else repr(raw[:117] + "...")
