"""Inputs for fuzzing mmalint, shared by the CI test (`test_fuzz.py`, a small fixed budget)
and the longer campaign (`benchmarks/fuzz.py`).

Two sources, each aimed at a different layer:
- token mutations of the bundled examples: almost-right kernels that reach the abstract
  interpreter, the rules and the fixes (a token deleted, duplicated, swapped or replaced);
- hypothesmith programs (any syntax the grammar allows), placed before and inside a kernel
  that calls an MMA, so the index, the block parser and the interpreter all see them.

`check_one` is the property: mmalint returns a report for any text, and a fix never turns a
file Python compiles into one it does not.
"""

from __future__ import annotations

import io
import keyword
import random
import textwrap
import tokenize
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mmalint.fixes.fixer import fix_text
from mmalint.pipeline.file import lint_text
from mmalint.settings import Settings

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*.py"))

_KERNEL = '''
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

{module}

def kernel(a_ref, b_ref, o_ref):
    acc = jnp.zeros((64, 64), jnp.float32)
{body}
    o_ref[...] = plgpu.mma(acc, a_ref[...], b_ref[...])
'''

_REPLACEMENTS = ("0", "1", "-1", "10**9", "1 << 64", "None", "True", "'a'", "()", "[]",
                 "jnp.int8", "jnp.uint8", "jnp.float32", "jnp.bfloat16", "x", "self",
                 "*", "**", ".", ",", ":", "(", ")", "[", "]", "lambda", "yield", "\\x0c")


@dataclass(frozen=True)
class Failure:
    kind: str  # "exception" or "fix broke the file"
    detail: str


def mutate(source: str, rng: random.Random) -> str:
    """`source` with one to three token-level edits."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    words = [t.string for t in tokens if t.type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP)]
    lines = source.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        candidates = [t for t in tokens if t.type in (tokenize.NAME, tokenize.NUMBER,
                                                      tokenize.OP, tokenize.STRING)]
        if not candidates or not words:
            break
        tok = rng.choice(candidates)
        (row, col), (end_row, end_col) = tok.start, tok.end
        if row != end_row or row > len(lines):
            continue
        line = lines[row - 1]
        action = rng.randrange(5)
        if action == 0:
            new = ""
        elif action == 1:
            new = tok.string + " " + tok.string
        elif action == 2:
            new = rng.choice(words)
        elif action == 3:
            new = rng.choice(_REPLACEMENTS)
        else:
            new = rng.choice(keyword.kwlist)
        lines[row - 1] = line[:col] + new + line[end_col:]
        source = "".join(lines)
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            break
        lines = source.splitlines(keepends=True)
    return source


def mutations(count: int, seed: int) -> Iterator[tuple[str, str]]:
    """(name, text) for `count` mutants of the examples, reproducible from `seed`."""
    rng = random.Random(seed)
    texts = [(p.name, p.read_text(encoding="utf-8")) for p in EXAMPLES]
    for i in range(count):
        name, text = texts[rng.randrange(len(texts))]
        yield f"{name}#mutant{seed}.{i}", mutate(text, rng)


def in_kernel(program: str) -> list[str]:
    """A generated program before a kernel, and inside its body."""
    body = textwrap.indent(program, "    ") if program.strip() else "    pass"
    return [_KERNEL.format(module=program, body="    pass"),
            _KERNEL.format(module="", body=body)]


def _compiles(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of mutants are noise here
        try:
            compile(text, "<fuzz>", "exec", dont_inherit=True, optimize=0)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
    return True


def check_one(name: str, text: str, settings: Settings | None = None) -> Failure | None:
    """Lint `text` and fix it with unsafe fixes; None when mmalint behaved."""
    settings = settings or Settings()
    try:
        lint_text(name, text, settings)
        fixed = fix_text(name, text, settings, unsafe=True)
    except Exception as exc:  # the property under test: nothing escapes
        return Failure("exception", f"{type(exc).__name__}: {exc}")
    if fixed.text != text and _compiles(text) and not _compiles(fixed.text):
        return Failure("fix broke the file", f"fixed {dict(fixed.fixed)}")
    return None
