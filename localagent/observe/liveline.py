"""The live line a foreground run shows on stderr: round, task, subtask, tokens, seconds
per round, the share of the prompt the server served from its cache (when it says), and
what the run is doing now (the model, a tool, a failing server) for how many seconds.

A 60 s model call on a CPU must not look hung: on a terminal a ticker redraws the line
every second with a spinner and the seconds so far. Piped, a line is written only when
it says something new (the seconds alone are not new).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from localagent.config.settings import Settings
from localagent.observe import pace
from localagent.state import State, counts, current
from localagent.system.console import live_line_supported, printable

TICK = 1.0
SPINNER = "|/-\\"
MODEL = "waiting for the model"


def _doing(rec: dict[str, Any]) -> str | None:
    """What the run does after this record; None when the record changes nothing."""
    kind = rec.get("type")
    if kind == "action_started":
        return f"running {str(rec.get('tool', '?'))[:40]}"
    if kind == "waiting":
        return f"the model server failed ({str(rec.get('reason', ''))[:60]}); retrying"
    if kind in ("action_finished", "action_blocked", "action_interrupted", "llm_call"):
        return MODEL
    if kind in ("preflight", "plan_created", "feedback"):
        return MODEL
    return None


class LiveLine:
    """A live line on stderr: round, task, subtask, tokens, the current step."""

    def __init__(self, settings: Settings, received: Callable[[], int] = lambda: 0) -> None:
        self.settings = settings
        self.received = received
        self.tty = live_line_supported(sys.stderr)
        self.last = ""
        self.where = f"round 0/{settings.max_rounds} · planning"
        self.doing = MODEL
        self.since = time.monotonic()
        self.rounds: list[float] = []  # when each round's model call ended, this run
        self.lock = threading.Lock()
        self.done = threading.Event()
        if self.tty:
            threading.Thread(target=self._tick, name="live-line", daemon=True).start()

    def show(self, state: State) -> None:
        here = current(state)
        c = counts(state)
        where = (
            (f"task {state.task_index + 1}/{len(state.goal.tasks)} · {here[1].description[:50]}")
            if here and state.goal
            else "finishing"
        )
        tokens = state.tokens.prompt + state.tokens.completion
        gaps = [b - a for a, b in zip(self.rounds, self.rounds[1:], strict=False)]
        cached = pace.run_share(state.tokens)
        pace_text = "".join(
            [
                f" · {pace.per_round(gaps)}" if gaps else "",
                f" · {cached:.0%} cached" if cached is not None else "",
            ]
        )
        self.where = (
            f"round {state.rounds}/{self.settings.max_rounds} · {c['completed']}/"
            f"{c['subtasks']} done · {where} · {tokens:,} tokens{pace_text}"
        )
        self._draw()

    def record(self, rec: dict[str, Any]) -> None:
        """A journal record: the step it starts, timed from now."""
        if pace.is_round(rec):
            self.rounds.append(time.monotonic())
        doing = _doing(rec)
        if doing is not None and doing != self.doing:
            self.doing, self.since = doing, time.monotonic()
            self._draw()

    def close(self) -> None:
        self.done.set()

    def _tick(self) -> None:
        while not self.done.wait(TICK):
            self._draw()

    def _draw(self) -> None:
        line = f"{self.where} · {self.doing}"
        seconds = time.monotonic() - self.since
        with self.lock:
            if not self.tty and line == self.last:
                return
            self.last = line
            if self.tty:
                line += f" {SPINNER[int(seconds) % len(SPINNER)]} {seconds:.0f}s"
                got = self.received() if self.doing == MODEL else 0
                line += f" · {got:,} bytes received" if got else ""
            try:
                shown = printable(line, one_line=True)  # a subtask's text is the model's
                start, end = ("\r\x1b[2K", "") if self.tty else ("", "\n")
                sys.stderr.write(start + shown + end)
                sys.stderr.flush()
            except (OSError, ValueError):
                pass  # a closed terminal must not end the run
