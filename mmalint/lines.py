"""Lines as Python, libcst and LSP count them: the one split of a text into rows."""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines as Python, libcst and LSP count them: `str.splitlines` also splits on form feeds and
    U+2028, which would shift every row after them."""
    return _LINE.findall(text)
