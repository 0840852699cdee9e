"""Resolved settings for one run: which rules, which jax, what to skip."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".mypy_cache", ".nox", ".pants.d", ".pytest_cache",
    ".ruff_cache", ".mmalint_cache", ".svn", ".tox", ".venv", "__pypackages__", "__pycache__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
)


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    target_jax: str = ""  # a catalog version key ("0.11"); resolved by the CLI
    target_arch: str = "sm_90a"
    show_expected_failures: bool = False
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = field(default_factory=tuple)

    def enabled(self, code: str | None) -> bool:
        """Ruff's rule: the most specific matching prefix wins; select beats ignore on a tie."""
        if code is None:
            return True
        selected = _best(code, (*self.select, *self.extend_select))
        ignored = _best(code, self.ignore)
        if selected < 0:
            return False
        return ignored < 0 or selected >= ignored


def _best(code: str, prefixes: tuple[str, ...]) -> int:
    """The length of the longest prefix that matches code (ALL counts as 0), or -1."""
    best = -1
    for prefix in prefixes:
        if prefix == "ALL":
            best = max(best, 0)
        elif code.startswith(prefix):
            best = max(best, len(prefix))
    return best
