"""The trace's entries as text: one entry a few lines, the first starting with the
seconds since the goal began. Model and tool text has its control characters escaped, and
long replies and results are cut (unless `full`) with a pointer to the whole output in the
output store."""

from __future__ import annotations

import reprlib
from typing import Any

from localagent.observe import pace
from localagent.observe.report import visible

RESULT_LINES = 8
RESULT_CHARS = 600
REPLY_CHARS = 400
INDENT = " " * 11
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 60, 60
_FULL_REPR = reprlib.Repr()
_FULL_REPR.maxlevel, _FULL_REPR.maxstring, _FULL_REPR.maxother = 10, 10**9, 10**9


def _listed(value: Any) -> list[Any]:
    """A field that should hold a list, as one (a planted record may hold anything)."""
    return value if isinstance(value, list) else []


def _clock(t: Any) -> str:
    return f"{t:>8.1f}s " if isinstance(t, int | float) else f"{'?':>9} "


def _secs(ms: Any) -> str:
    return f"{ms / 1000:.1f}s" if isinstance(ms, int | float) else "?s"


def _count(value: Any) -> str:
    return str(value) if isinstance(value, int | float) else "?"


def _one_line(value: Any, limit: int) -> str:
    text = visible(" ".join(str(value).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_text(name: Any, args: Any, full: bool) -> str:
    if not isinstance(args, dict):
        return f"{visible(str(name))}({visible(str(args))})"
    shown = []
    for key, value in args.items():
        if key == "content" and not full:
            shown.append(f"{key}=<{len(str(value))} chars>")
        else:
            shown.append(f"{key}={(_FULL_REPR if full else _REPR).repr(value)}")
    return visible(f"{name}({', '.join(shown)})")


def _block(
    text: Any, full: bool, lines: int = RESULT_LINES, chars: int = RESULT_CHARS
) -> list[str]:
    """Multi-line text, each line escaped; cut to `lines` lines and `chars` characters."""
    rows = str(text).splitlines() or [""]
    if full:
        return [visible(row) for row in rows]
    kept: list[str] = []
    used = 0
    for row in rows[:lines]:
        if used + len(row) > chars:
            kept.append(visible(row[: max(0, chars - used)]) + "…")
            break
        kept.append(visible(row))
        used += len(row)
    if len(rows) > len(kept):
        kept.append(f"… {len(rows) - len(kept):,} more lines (--full shows them)")
    return kept


def _tokens(entry: dict[str, Any]) -> str:
    took = _secs(entry.get("duration_ms"))
    cut = f", cut off ({visible(entry['cut_off'])})" if entry.get("cut_off") else ""
    hot = entry.get("temperature")  # raised: the model had sent one call twice running
    cut += f", at temperature {hot}" if isinstance(hot, int | float) else ""
    about = "~" if entry.get("estimated") is True else ""  # counted by us, not the server
    prompt, completion = (
        _count(entry.get("prompt_tokens", 0)),
        _count(entry.get("completion_tokens", 0)),
    )
    tokens = f"{about}{prompt}+{about}{completion}"
    part = pace.call_share(entry)
    cached = "" if part is None else f" ({part:.0%} of the prompt cached)"
    return f"{tokens} tokens{cached} in {took}{cut}"


def _tasks(tasks: Any, first: int) -> list[str]:
    lines = []
    for i, task in enumerate(_listed(tasks), first):
        task = task if isinstance(task, dict) else {}
        lines.append(f"{i}  {_one_line(task.get('description', ''), 200)}")
        for j, sub in enumerate(_listed(task.get("subtasks")), 1):
            lines.append(f"  {i}.{j}  {_one_line(sub, 200)}")
    return lines


def _goal(e: dict[str, Any]) -> list[str]:
    s = e.get("settings") if isinstance(e.get("settings"), dict) else {}
    line = f"model {e.get('model', '?')}, {s.get('backend', 'ollama')} backend"
    line += f", at most {s.get('max_rounds', '?')} rounds"
    if _listed(s.get("checks")):
        line += ", checks: " + "; ".join(str(c) for c in s["checks"])
    return [f"goal: {visible(str(e.get('goal', '')))}", visible(line)]


def _round(e: dict[str, Any], full: bool) -> list[str]:
    where = ""
    if "subtask" in e:
        where = f" · subtask {e['subtask']} {_one_line(e.get('subtask_text', ''), 50)}"
    lines = [f"round {e['round']}{where} · {_tokens(e)}"]
    if e.get("reply"):
        said = _block(e["reply"], full, lines=4, chars=REPLY_CHARS)
        lines += [f"  says: {said[0]}"] + [f"        {row}" for row in said[1:]]
    for c in _listed(e.get("calls")):
        lines.append(f"  calls {c.get('id')} {call_text(c.get('name'), c.get('arguments'), full)}")
    if not e.get("calls"):
        lines.append("  (no tool call)")
    return lines


def _result(e: dict[str, Any], full: bool) -> list[str]:
    how = "ok" if e.get("ok") is True else "error"
    extra = "".join(f", {k}" for k in ("redone", "applied") if e.get(k))
    if e.get("returncode") is not None:
        extra += f", exit code {e['returncode']}"
    head = f"  {e.get('call') or ''} {visible(str(e.get('tool')))} -> {how}"
    lines = [f"{head} in {_secs(e.get('ms'))}{extra}"]
    lines += [f"    {row}" for row in _block(e.get("result", ""), full)]
    if e.get("output") is not None:
        ref = e["output"]
        lines.append(f"    whole output: read_output(id={ref}), .agent_context/outputs/{ref}.txt")
    return lines


def _plan(e: dict[str, Any]) -> list[str]:
    if e.get("unmet"):
        head = "plan for what is unmet: " + "; ".join(_one_line(u, 80) for u in _listed(e["unmet"]))
    elif e.get("first", 1) != 1:
        head = f"replan: the tasks from {e['first']} on are now"
    else:
        head = "plan"
    return [head] + [f"  {row}" for row in _tasks(e.get("tasks"), e.get("first", 1))]


def _end(e: dict[str, Any]) -> list[str]:
    tokens = e.get("tokens") if isinstance(e.get("tokens"), dict) else {}
    total = _number(tokens.get("prompt")) + _number(tokens.get("completion"))
    how = f" ({e['verification']})" if e.get("verification") else ""
    return [
        f"goal {e['kind'].split('_')[1]}{how}: {_one_line(e.get('reason', ''), 300)}",
        f"  {e['round']} rounds, {total:,} tokens",
    ]


def _lines(e: dict[str, Any], full: bool) -> list[str]:
    kind = e["kind"]
    if kind == "goal":
        return _goal(e)
    if kind == "round":
        return _round(e, full)
    if kind == "result":
        return _result(e, full)
    if kind == "plan":
        return _plan(e)
    if kind in ("goal_completed", "goal_failed"):
        return _end(e)
    if kind == "model_call":
        return [f"model call ({visible(e.get('purpose', '?'))}): {_tokens(e)}"]
    if kind == "blocked":
        call = call_text(e.get("tool"), e.get("args"), full)
        head = f"  {e.get('call') or ''} BLOCKED {call} ({e.get('pattern', '?')}), not run"
        return [head] + [f"    {row}" for row in _block(e.get("reason"), full, 1, 160)]
    if kind == "subtask":
        what = f"subtask {e.get('subtask', '?')} {e['status']}: {_one_line(e.get('reason'), 200)}"
        return [what + (" (a replan is owed)" if e.get("replan") else "")]
    if kind == "check":
        cmd = _one_line(e.get("cmd"), 100)
        head = f"check `{cmd}` {e.get('status')} in {_secs(e.get('ms'))}: "
        return [head + _one_line(e.get("summary", ""), 100)]
    if kind == "verdict":
        unmet = "; ".join(_one_line(u, 80) for u in _listed(e.get("unmet"))) or "nothing unmet"
        return [
            f"verdict {e.get('verdict')} (by the {e.get('source')}): {unmet}; then {e.get('then')}"
        ]
    return _other(e, full)


def _other(e: dict[str, Any], full: bool) -> list[str]:
    kind = e["kind"]
    if kind == "loop_detected":
        return []  # the blocked action above says it
    if kind == "preflight":
        how = "native tool calls" if e.get("native_tools") else "tool calls written as text"
        return [f"preflight: {e.get('backend', '?')}, num_ctx {e.get('num_ctx')}, {how}"]
    if kind == "resumed":
        settings = e.get("settings") if isinstance(e.get("settings"), dict) else {}
        changed = ", ".join(f"{k}={v!r}" for k, v in settings.items())
        return [visible(f"resumed (model {e.get('model')}{'; ' + changed if changed else ''})")]
    if kind == "verify":
        checks = "; ".join(_one_line(c, 80) for c in _listed(e.get("checks"))) or "none"
        return [f"verify the goal: checks {checks}"]
    if kind in ("feedback", "action_interrupted"):
        head = f"  {e.get('call') or ''} {kind.replace('_', ' ')} ({visible(str(e.get('tool')))})"
        return [head.replace("   ", "  ")] + [
            f"    {row}" for row in _block(e.get("text"), full, 3)
        ]
    if kind in ("snapshot", "changes", "rewinding", "rewound"):
        return _files(e)
    if kind == "malformed":
        return [f"record {e.get('seq')} ({visible(e.get('type'))}) is malformed; skipped"]
    if kind == "waiting":
        return [f"waiting for the model server: {_one_line(e.get('reason', ''), 300)}"]
    if kind in ("suspended", "stopped", "replan_skipped"):
        by = f" by the {e['by']}" if e.get("by") else ""
        return [f"{kind.replace('_', ' ')}{by}: {_one_line(e.get('reason', ''), 300)}"]
    return [f"record {visible(str(e.get('type', kind)))}"]


def _files(e: dict[str, Any]) -> list[str]:
    """Rewind's records: what a step changed, a snapshot, a rewind (nothing when empty)."""
    files = [f for f in _listed(e.get("files")) if isinstance(f, list) and len(f) == 3]
    how = {(True, False): "created", (False, True): "deleted"}
    named = [f"{f[0]} ({how.get((f[1] is None, f[2] is None), 'changed')})" for f in files]
    more = f" and {len(named) - 8} more" if len(named) > 8 else ""
    names = visible(", ".join(named[:8]) + more)
    kind = e["kind"]
    if kind == "snapshot" and e.get("base") is not None:
        return [f"snapshot: the workspace's {e['base']} files kept for rewind"]
    if not files:
        return []
    if kind == "snapshot":
        return [f"changed outside the agent: {names}"]
    if kind == "changes":
        return [f"  files changed by s{e.get('action')} ({visible(str(e.get('tool')))}): {names}"]
    return [f"{kind} to just before s{e.get('to')}: {names}"]


def _number(value: Any) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def render(entry: dict[str, Any], full: bool = False) -> list[str]:
    """An entry as text: the first line starts with the seconds since the goal began."""
    lines = _lines(entry, full)
    if not lines:
        return []
    return [_clock(entry.get("t")) + lines[0]] + [INDENT + line for line in lines[1:]]
