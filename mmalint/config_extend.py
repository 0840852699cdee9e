"""`extend = "../base.toml"`: a configuration that starts from another one (ruff's `extend`).

The base is read first and the extending file's keys go on top, so a monorepo keeps its shared
settings once. `extend` is relative to the file that names it, and chains: a base may extend
another base; a file met twice in one chain is a cycle, and an error.

Keys replace the base's, except where ruff accumulates: `ignore`, `extend-select`,
`extend-exclude` and `unfixable` add to the base's lists, and a `select` (`fixable`) of its own
starts the selection afresh, dropping the base's `ignore` and `extend-select` (`unfixable`) as
ruff's rule selection does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

Section = dict[str, Any]

# key -> the keys a value of it resets: ruff applies each file's selection on top of its base's.
_RESETS = {"select": ("ignore", "extend-select"), "fixable": ("unfixable",)}
_ADDED = ("ignore", "extend-select", "extend-exclude", "unfixable")


class ExtendError(Exception):
    """An `extend` chain that cannot be followed: a cycle, or a value that is no path."""


def with_extends(section: Section, path: Path, load: Callable[[Path, Path], Section]) -> Section:
    """`section` (read from `path`) over the configurations its `extend` chain names.

    `load(base, named_by)` reads and validates the mmalint settings of `base`.
    """
    chain = [Path(os.path.realpath(path))]
    layers = [section]
    while "extend" in layers[-1]:
        value = layers[-1]["extend"]
        if not isinstance(value, str) or not value:
            raise ExtendError(f"{chain[-1]}: `extend` must be the path of a configuration file, got {value!r}")
        base = Path(os.path.realpath(chain[-1].parent / os.path.expanduser(value)))
        if base in chain:
            cycle = " -> ".join(str(p) for p in (*chain[chain.index(base):], base))
            raise ExtendError(f"{chain[0]}: `extend` cycle: {cycle}")
        layers.append(load(base, chain[-1]))
        chain.append(base)
    merged: Section = {}
    for layer in reversed(layers):
        _merge(merged, layer)
    merged.pop("extend", None)
    return merged


def _merge(merged: Section, layer: Section) -> None:
    for key in layer:
        for dropped in _RESETS.get(key, ()):
            merged.pop(dropped, None)
    for key, value in layer.items():
        if key in _ADDED and key in merged:
            merged[key] = [*_as_list(merged[key]), *_as_list(value)]
        else:
            merged[key] = value


def _as_list(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value)
