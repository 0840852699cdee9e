"""Diagnostics: what a reporter, the fixer, the language server and `confirm` consume.

Plain frozen data with positions already resolved, so they cross process boundaries and never
hold libcst nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mmalint.tree import Observed


@dataclass(frozen=True, order=True)
class Location:
    """1-based row, 1-based column in code points (ruff's convention).

    In a notebook `row` counts in the text that was checked, its code cells joined (what the
    fixes edit and `# noqa` rows are found in), and `cell` and `cell_row` say where that is for
    a person: the cell, 1-based among all the notebook's cells, and the row within it.
    """

    row: int
    column: int
    cell: int | None = field(default=None, compare=False)
    cell_row: int | None = field(default=None, compare=False)

    @property
    def shown_row(self) -> int:
        """The row a person reads: within its cell in a notebook, else the row."""
        return self.cell_row if self.cell_row is not None else self.row

    def label(self) -> str:
        """`row:column`, or `cell N:row:column` in a notebook (ruff's form)."""
        where = f"{self.shown_row}:{self.column}"
        return where if self.cell is None else f"cell {self.cell}:{where}"

    def to_json(self) -> dict[str, int]:
        return {"row": self.shown_row, "column": self.column}


@dataclass(frozen=True)
class Range:
    filename: str
    start: Location
    end: Location


@dataclass(frozen=True)
class Related:
    message: str
    range: Range

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "filename": self.range.filename,
            "cell": self.range.start.cell,
            "location": self.range.start.to_json(),
            "end_location": self.range.end.to_json(),
        }


@dataclass(frozen=True)
class PredictedError:
    exception: str
    message: str
    jax_version: str
    match: str = "exact"

    def to_json(self) -> dict[str, Any]:
        return {
            "exception": self.exception,
            "message": self.message,
            "jax_version": self.jax_version,
            "match": self.match,
        }

    def __str__(self) -> str:
        # A message known in part only says so: jax writes more before (`contains`) or after it.
        before = "... " if self.match == "contains" else ""
        suffix = " ..." if self.match in ("prefix", "contains") else ""
        return f"{self.exception}: {before}{self.message}{suffix}"


@dataclass(frozen=True)
class OperandPrediction:
    """For a call whose operands mmalint does not know: what jax raises with one operand dtype."""

    operand_dtype: str
    code: str
    error: PredictedError

    def to_json(self) -> dict[str, Any]:
        return {"operand_dtype": self.operand_dtype, "code": self.code, **self.error.to_json()}

    def __str__(self) -> str:
        return f"{self.operand_dtype} operands: {self.error}"


@dataclass(frozen=True)
class Edit:
    content: str
    range: Range

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "cell": self.range.start.cell,
            "location": self.range.start.to_json(),
            "end_location": self.range.end.to_json(),
        }


@dataclass(frozen=True)
class Fix:
    applicability: str  # "safe" or "unsafe"
    message: str
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [e.to_json() for e in self.edits],
        }


@dataclass(frozen=True)
class Diagnostic:
    code: str | None  # None for syntax and I/O errors, which no rule owns
    name: str
    severity: str
    message: str
    range: Range
    related: tuple[Related, ...] = ()
    predicted_error: PredictedError | None = None
    # The call fails, but which exception jax raises depends on values mmalint does not know
    # (the operands of an accumulator no operand dtype accepts): why there is no prediction.
    unpredicted: str | None = None
    predicted_by_operand: tuple[OperandPrediction, ...] = ()
    help: str | None = None
    fix: Fix | None = None
    call: dict[str, Any] | None = None
    world: dict[str, str] = field(default_factory=dict)
    worlds: tuple[dict[str, str], ...] = ()
    url: str | None = None
    masked_by: str | None = None
    statement_rows: tuple[int, int] | None = None  # rows of the statement, where noqa comments apply

    @property
    def filename(self) -> str:
        return self.range.filename

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.filename, self.range.start.row, self.range.start.column, self.code or "")

    def prediction_text(self) -> str | None:
        """The predicted error as one line of text, or the reason there is none."""
        if self.predicted_error is not None:
            return f"jax {self.predicted_error.jax_version} raises: {self.predicted_error}"
        if self.predicted_by_operand:
            version = self.predicted_by_operand[0].error.jax_version
            return f"jax {version} raises, by the operand dtype: " + "; ".join(
                str(p) for p in self.predicted_by_operand
            )
        return self.unpredicted

    def noqa_row(self) -> int:
        """The row, as a person counts it (within the cell in a notebook), whose `# noqa` applies."""
        start = self.range.start
        row = self.statement_rows[0] if self.statement_rows else start.row
        # The statement starts in the finding's cell (a statement spans cells only in code that
        # does not parse), so it shares the finding's offset from the checked text.
        return max(row - (start.row - start.shown_row), 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "filename": self.filename,
            "cell": self.range.start.cell,
            "location": self.range.start.to_json(),
            "end_location": self.range.end.to_json(),
            "url": self.url,
            "related": [r.to_json() for r in self.related],
            "predicted_error": self.predicted_error.to_json() if self.predicted_error else None,
            "unpredicted": self.unpredicted,
            "predicted_by_operand": (
                [p.to_json() for p in self.predicted_by_operand] if self.predicted_by_operand else None
            ),
            "masked_by": self.masked_by,
            "help": self.help,
            "fix": self.fix.to_json() if self.fix else None,
            "world": dict(self.world),
            "worlds": [dict(w) for w in self.worlds],
            "noqa_row": self.noqa_row(),
            "call": self.call,
        }


@dataclass(frozen=True)
class FileReport:
    filename: str
    diagnostics: tuple[Diagnostic, ...] = ()
    parsed: bool = False  # False when the prefilter skipped it
    calls: int = 0  # distinct MMA call sites reached
    known_calls: int = 0  # ... with every operand's element type and signedness known
    error: str | None = None  # the input error, when the file could not be read
    calls_by_api: dict[str, int] = field(default_factory=dict)
    # False when the analysis stopped early somewhere (its budget, a block nested too deeply):
    # what it did not reach is unknown, and reported as nothing.
    complete: bool = True
    # What the check read of the tree besides the file (`tree.Observed`, when the run keeps a
    # result cache): not part of the result.
    observed: Observed | None = field(default=None, compare=False, repr=False)
