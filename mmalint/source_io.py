"""Source bytes to text and back, unchanged but for the edits: encoding, BOM, line endings.

Reading honours a PEP 263 coding cookie and a UTF-8 BOM; writing uses the same encoding and
puts the BOM back. Line endings are never translated (the text keeps its `\\r\\n`), and the fix
edits take the file's own line ending (`fixes/apply.py`). Writing a fixed file back, only if it
is still what was read, is `fixes/write.py`'s job.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass

from mmalint.pipeline.text import InputError, decode_source, not_decodable


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # as tokenize names it: "utf-8", "utf-8-sig" (a BOM), "iso-8859-1"...


def decode(data: bytes) -> SourceText:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise InputError(not_decodable(data, exc)) from None
    return SourceText(decode_source(data), encoding)


def encode(text: str, source: SourceText) -> bytes:
    """The text in the encoding it was read in; "utf-8-sig" writes the BOM back."""
    return text.encode(source.encoding)
