"""Resolved settings for one run: which rules, which jax, what to skip."""

from __future__ import annotations

import contextlib
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pytest_cache", ".ruff_cache", ".mmalint_cache", ".svn", ".tox", ".venv",
    "__pypackages__", "__pycache__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
)


# ruff's default `src`: the project root and its `src/` directory.
DEFAULT_SRC: tuple[str, ...] = (".", "src")


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    target_jax: str = ""  # a catalog version key ("0.11"); `mmalint.target_jax` says which
    target_jax_source: str = ""  # which source decided it, for `--show-settings`
    target_jax_note: str | None = None  # why it is not simply the version written (a range...)
    target_arch: str = "sm_90a"
    target_arch_given: bool = False  # set in a config file or by --target-arch, not the default
    show_expected_failures: bool = False
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = field(default_factory=tuple)
    config_file: str | None = None  # where these settings came from (`--show-settings`)
    project_root: str | None = None  # the directory patterns are relative to
    respect_gitignore: bool = True  # a directory walk skips what .gitignore files ignore
    fixable: tuple[str, ...] = ("ALL",)  # rule codes or prefixes whose fixes may be applied
    unfixable: tuple[str, ...] = ()  # ... and those whose fixes never are (ruff: it always wins)
    unsafe_fixes: bool = False  # `unsafe-fixes = true`: --fix applies the unsafe fixes too
    # Where imports of the checked tree's own modules are looked for, relative to the project
    # root (ruff's `src`); None: `DEFAULT_SRC`.
    src: tuple[str, ...] | None = None
    cache_dir: str | None = None  # `cache-dir`: where `mmalint check` keeps its results (`pipeline.cache`)

    def may_fix(self, code: str | None) -> bool:
        """Whether `fixable`/`unfixable` let fixes of this rule be offered and applied."""
        return code is None or (_best(code, self.fixable) >= 0 and _best(code, self.unfixable) < 0)

    def enabled(self, code: str | None) -> bool:
        """Ruff's rule: the most specific matching prefix wins; select beats ignore on a tie."""
        if code is None:
            return True
        selected = _best(code, (*self.select, *self.extend_select))
        ignored = _best(code, self.ignore)
        if selected < 0:
            return False
        return ignored < 0 or selected >= ignored

    def enabled_for(self, code: str | None, filename: str) -> bool:
        """`enabled`, minus what `per-file-ignores` turns off for this file."""
        if not self.enabled(code):
            return False
        if code is None or not self.per_file_ignores:
            return True
        ignored = self._per_file(filename)
        return _best(code, ignored) < 0 or _best(code, (*self.select, *self.extend_select)) > _best(code, ignored)

    def _per_file(self, filename: str) -> tuple[str, ...]:
        path = Path(filename)
        candidates = [path.name, path.as_posix()]
        if self.project_root is not None:
            with contextlib.suppress(ValueError):
                candidates.append(path.resolve().relative_to(self.project_root).as_posix())
        codes: list[str] = []
        for pattern, ignored in self.per_file_ignores:
            if any(fnmatch.fnmatch(c, pattern) for c in candidates):
                codes.extend(ignored)
        return tuple(codes)


def _best(code: str, prefixes: tuple[str, ...]) -> int:
    """The length of the longest prefix that matches code (ALL counts as 0), or -1."""
    best = -1
    for prefix in prefixes:
        if prefix == "ALL":
            best = max(best, 0)
        elif code.startswith(prefix):
            best = max(best, len(prefix))
    return best
