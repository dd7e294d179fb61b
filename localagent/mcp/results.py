"""An MCP tool result, in its wire form, made into the text of an observation: text
joined, structured content as JSON, images and audio named and sized, never inlined."""

from __future__ import annotations

from typing import Any

import orjson


def _size(data: object) -> str:
    count = len(data) * 3 // 4 if isinstance(data, str) else 0  # base64
    if count < 1024:
        return f"{count} bytes"
    return f"{count / 1024:.1f} KB" if count < 1 << 20 else f"{count / (1 << 20):.1f} MB"


def _block(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType') or '?'}, {_size(block.get('data'))}; not shown]"
    if kind == "resource" and isinstance(block.get("resource"), dict):
        res = block["resource"]
        if isinstance(res.get("text"), str):
            return f"[resource {res.get('uri', '?')}]\n{res['text']}"
        mime = res.get("mimeType") or "binary"
        return f"[resource {res.get('uri', '?')}, {mime}, {_size(res.get('blob'))}; not shown]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri', '?')}: {block.get('name', '')}]"
    return f"[{kind} content; not shown]"


def _same_json(text: str, value: object) -> bool:
    try:
        return orjson.loads(text) == value
    except orjson.JSONDecodeError:
        return False


def observation(result: dict[str, Any]) -> tuple[bool, str]:
    """Whether the call succeeded (`isError` unset) and the text the model reads."""
    parts = [_block(block) for block in result.get("content") or []]
    parts = [part for part in parts if part]
    structured = result.get("structuredContent")
    # Servers should send structured content again as JSON text: shown once. A lone
    # "result" beside other content is the SDK's wrapping of a plain return value.
    wrapped = isinstance(structured, dict) and list(structured) == ["result"] and parts
    if structured is not None and not wrapped and not any(_same_json(p, structured) for p in parts):
        parts.append(orjson.dumps(structured, option=orjson.OPT_INDENT_2).decode())
    return not result.get("isError"), "\n".join(parts) or "(no output)"
