"""A served collection's directory: its layout file and its parts' databases.

    <path>/parts.json        {"format": 1, "parts": N, "routing": "splitmix64"}
    <path>/part-00000/       a shoal database (its collection "default")
    ...
    <path>/part-<N-1>/

The layout file is written once, when the collection is made, before any
part exists (atomically: a temporary file synced, renamed, the directory
synced), and never changes: the number of parts and the routing rule decide
where every id lives, so a collection cannot be reopened with another
number of parts (that would be a resharding, which moves records).
"""

from __future__ import annotations

import json
import os
from typing import Optional

from ._routing import ROUTING

LAYOUT_FILE = "parts.json"
FORMAT = 1


def part_dir(path: str, index: int) -> str:
    """The database directory of part `index`."""
    return os.path.join(path, f"part-{index:05d}")


def read_parts(path: str) -> Optional[int]:
    """The number of parts of the collection at `path`; None when `path`
    holds no layout file. ValueError when the file is not one we wrote."""
    try:
        with open(os.path.join(path, LAYOUT_FILE), encoding="utf-8") as f:
            layout = json.load(f)
    except FileNotFoundError:
        return None
    except ValueError as e:
        raise ValueError(f"{path}/{LAYOUT_FILE}: not a layout file ({e})") from None
    if (not isinstance(layout, dict) or layout.get("format") != FORMAT
            or layout.get("routing") != ROUTING
            or not isinstance(layout.get("parts"), int) or layout["parts"] < 1):
        raise ValueError(f"{path}/{LAYOUT_FILE}: format {FORMAT} with routing "
                         f"{ROUTING!r} and parts >= 1 expected, got {layout!r}")
    return layout["parts"]


def write_parts(path: str, n_parts: int) -> None:
    """Makes `path` (and its parents) and writes its layout file durably."""
    os.makedirs(path, exist_ok=True)
    body = json.dumps({"format": FORMAT, "parts": n_parts, "routing": ROUTING})
    tmp = os.path.join(path, LAYOUT_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(body + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(path, LAYOUT_FILE))
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
