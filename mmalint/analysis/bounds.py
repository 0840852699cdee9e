"""What folding the checked code's constants may build, decided before building it.

The interpreter folds constants the way Python would, but the checked code is data, not a
program we trust: `'a' * 10**9` would allocate a gigabyte and `1 << 8000000000` would not end.
Each operation is priced from its operands first; one that would build more than a kernel's
shapes and dtypes ever need is not done, and its value is unknown (silence, never a guess).
"""

from __future__ import annotations

import re

# A string or bytes constant longer than this is never an MMA fact (dtype names, einsum specs,
# messages are short): building it is refused.
MAX_TEXT_LENGTH = 1 << 16
# Shapes, strides and bit tricks stay far below this; the interpreter forgets ints past 2**64
# anyway (`ApiModel.binary`), so this only bounds what may be computed on the way.
MAX_INT_BITS = 4096
# A tuple, list or dict value: at most this many values inside it, counted with repeats
# (`[[0] * 256] * 256` shares one row but compares and joins as 65,536 items).
MAX_SIZE = 1 << 14
# ... and at most this deep, so comparing or joining two of them cannot recurse without end.
MAX_DEPTH = 64

# A printf-style format with a width or precision of 1,000 or more, or one taken from the
# arguments (`%*d`): its result can be as large as the checked code likes.
_WIDE_FORMAT = re.compile(r"%[^a-zA-Z%]*(?:\*|\d{4,})")


def _bits(value: object) -> int:
    return value.bit_length() if isinstance(value, int) else 0


def _length(value: object) -> int | None:
    return len(value) if isinstance(value, str | bytes) else None


def affordable(op: str, left: object, right: object) -> bool:
    """Whether `left op right` on two Python constants stays within the bounds above.

    Decided from the operands alone: an int's bit length, a text's length. Operations whose
    result is no larger than their operands (comparisons, `-`, `//`, `&`...) are always
    affordable, since the operands already are.
    """
    if op == "*":
        if isinstance(left, int) and isinstance(right, int):
            return _bits(left) + _bits(right) <= MAX_INT_BITS
        text, count = (left, right) if isinstance(right, int) else (right, left)
        length = _length(text)
        if length is not None and isinstance(count, int):
            return length * max(count, 0) <= MAX_TEXT_LENGTH
        return True
    if op == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0:
            return max(_bits(left), 1) * right <= MAX_INT_BITS
        return not (isinstance(right, int) and abs(right) > MAX_INT_BITS)
    if op == "<<":
        if isinstance(left, int) and isinstance(right, int):
            return _bits(left) + max(right, 0) <= MAX_INT_BITS
        return True
    if op == "+":
        left_length, right_length = _length(left), _length(right)
        if left_length is not None and right_length is not None:
            return left_length + right_length <= MAX_TEXT_LENGTH
        return True
    if op == "%" and isinstance(left, str | bytes):
        text = left if isinstance(left, str) else left.decode("latin-1")
        return _WIDE_FORMAT.search(text) is None
    return True


def affordable_ints(values: list[int]) -> bool:
    """Whether a product or multiple of these ints (`math.prod`, `math.lcm`) stays bounded."""
    return sum(_bits(v) for v in values) <= MAX_INT_BITS
