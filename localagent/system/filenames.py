"""File names that mean the same file on every system the agent may run on.

Windows reads some names differently from POSIX: `a.py:x` is a hidden stream of `a.py`,
`CON` or `nul.txt` in any folder is a device, and a trailing dot or space is dropped, so
`a.py.` is `a.py`. A workspace may move between systems (a clone, a shared drive), so such
names are refused everywhere, and before anything touches the disk: on Windows merely
resolving `CON` opens the console.
"""

from __future__ import annotations

# Windows opens a device for these names, in any folder and with any extension.
WINDOWS_DEVICE_NAMES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"{kind}{n}" for kind in ("com", "lpt") for n in [*"0123456789", *"\u00b9\u00b2\u00b3"]}
)


def is_device_name(name: str) -> bool:
    """Whether Windows reads name as a device (`CON`, `nul.txt`, `COM1 .log`, `CONIN$`)."""
    return name.split(".")[0].rstrip(" ").casefold() in WINDOWS_DEVICE_NAMES


def name_problem(name: str) -> str | None:
    """What is wrong with one file or folder name (`.` and `..` are fine), or None."""
    if name in ("", ".", ".."):
        return None
    if ":" in name:
        return (
            f"has ':' in the name {name!r}; names may not contain ':' (on Windows it names "
            "a hidden stream of the file)"
        )
    if is_device_name(name):
        return f"uses {name!r}, a reserved device name"
    if name.rstrip(". ") != name:
        return (
            f"has a name that ends with a dot or a space ({name!r}); Windows drops those, "
            f"use {name.rstrip('. ')!r}"
        )
    return None
