"""The text stage: a file's bytes as Python source, and whether the file is worth running.

The prefilter is a byte scan, so that a file which cannot contain an MMA call is neither decoded
nor parsed: `worth_running` is the one place that decides it, for the CLI, the runner, the
benchmarks and the tests alike.
"""

from __future__ import annotations

import io
import tokenize


class InputError(Exception):
    """A file that cannot be read or decoded: reported, never a traceback."""


def worth_running(data: bytes, report_unused_noqa: bool = False) -> bool:
    """Whether a file's bytes may hold a finding: an MMA call's trigger words, or (when unused
    noqa directives are reported) a `noqa` comment that may suppress nothing."""
    # The trigger words are the models' (`analysis.prefilter`): loaded when a file is first
    # scanned, so that reading and decoding source (a run answered from its cache) needs none.
    from mmalint.analysis import may_contain_mma

    return may_contain_mma(data) or (report_unused_noqa and b"noqa" in data.lower())


def not_decodable(data: bytes, error: Exception) -> str:
    """Why a file cannot be read as Python source, for a person."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return (
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} on line {line}) and no PEP 263 "
            "coding declaration says what it is; add `# -*- coding: latin-1 -*-` or re-encode as UTF-8"
        )
    return f"cannot determine the encoding: {error}"


def decode_source(data: bytes) -> str:
    """Decode Python source honouring a PEP 263 coding cookie and a BOM."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise InputError(not_decodable(data, exc)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise InputError(f"not valid {encoding}: {exc}" if encoding != "utf-8" else not_decodable(data, exc)) from None
    return text.removeprefix("\ufeff")
