"""Project configuration: `[tool.mmalint]` in pyproject.toml, or mmalint.toml / .mmalint.toml.

The configuration file nearest to a checked file wins (like ruff); command-line options
override it. Unknown keys, unknown rule codes and malformed values are errors (exit 2).
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import os
import re
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mmalint.catalog import Catalog, CatalogError, load_catalog
from mmalint.inputs import UnreadableInput, read_regular
from mmalint.settings import DEFAULT_EXCLUDE, Settings

CONFIG_NAMES = (".mmalint.toml", "mmalint.toml", "pyproject.toml")
KEYS = (
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "target-jax",
    "target-arch",
)
# A configuration file is a few hundred bytes; anything this large is not one.
MAX_CONFIG_BYTES = 1024 * 1024
ARCH = re.compile(r"sm_\d{2,3}[af]?")


class ConfigError(Exception):
    """A configuration file or option mmalint cannot use: reported with exit code 2."""


@dataclass(frozen=True)
class Overrides:
    """What the command line says; None means "not given", so the configuration decides."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    target_jax: str | None = None
    target_arch: str | None = None
    show_expected_failures: bool = False


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent


def _section(path: Path) -> dict[str, Any] | None:
    """The mmalint table of a config file, or None when the file does not configure mmalint."""
    try:
        data = tomllib.loads(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnreadableInput as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{path}: invalid TOML: nested too deeply to read") from None
    tool = data.get("tool")
    if path.name == "pyproject.toml":
        section = tool.get("mmalint") if isinstance(tool, dict) else None
        if section is None:
            return None
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [tool.mmalint] must be a table")
        return section
    if "tool" in data:
        if not isinstance(tool, dict) or not isinstance(tool.get("mmalint", {}), dict):
            raise ConfigError(
                f"{path}: `tool` must be a table with a [tool.mmalint] table of settings, "
                f"got {type(tool).__name__ if not isinstance(tool, dict) else 'another kind of tool'}")
        section = tool.get("mmalint", data)
    else:
        section = data
    return section


def load_config_file(path: Path, catalog: Catalog) -> ConfigFile:
    section = _section(path)
    if section is None:
        raise ConfigError(f"{path}: no [tool.mmalint] table")
    validate(section, path, catalog)
    return ConfigFile(path.resolve(), section)


def find_config(start: Path, catalog: Catalog) -> ConfigFile | None:
    """The nearest configuration at or above `start` (a file or directory)."""
    directory = start if _is(start, stat.S_ISDIR) else start.parent
    # realpath, not resolve(): a symlink loop on the way must not raise
    directory = Path(os.path.realpath(directory))
    for folder in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if _is(candidate, stat.S_ISREG):
                section = _section(candidate)
                if section is not None:
                    validate(section, candidate, catalog)
                    return ConfigFile(Path(os.path.realpath(candidate)), section)
    return None


def _is(path: Path, kind: Callable[[int], bool]) -> bool:
    """Whether `path` exists and is of `kind`; a path that cannot be looked at is not."""
    try:
        return kind(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _codes(value: Any, key: str, path: Path, catalog: Catalog) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of rule codes, got {value!r}")
    for code in value:
        if code != "ALL" and (not re.fullmatch(r"MMA\d{0,3}", code) or not catalog.select((code,))):
            raise ConfigError(f"{path}: `{key}`: unknown rule selector {code!r} (see `mmalint rules`)")
    return tuple(value)


def _patterns(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of glob patterns, got {value!r}")
    return tuple(value)


def validate(section: dict[str, Any], path: Path, catalog: Catalog) -> None:
    for key, value in section.items():
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise ConfigError(f"{path}: unknown key `{key}` in the mmalint settings{hint}")
        if key in ("select", "ignore", "extend-select"):
            _codes(value, key, path, catalog)
        elif key in ("exclude", "extend-exclude"):
            _patterns(value, key, path)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: `per-file-ignores` must be a table of pattern = [codes]")
            for pattern, codes in value.items():
                _codes(codes, f"per-file-ignores.{pattern}", path, catalog)
        elif key == "target-jax":
            if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+(\.\d+)*", value):
                raise ConfigError(f"{path}: `target-jax` must be a version like \"0.11\", got {value!r}")
            try:
                catalog.resolve_version(value)
            except CatalogError as exc:
                raise ConfigError(f"{path}: `target-jax`: {exc}") from None
        elif key == "target-arch" and (not isinstance(value, str) or not ARCH.fullmatch(value)):
            raise ConfigError(f"{path}: `target-arch` must look like \"sm_90a\", got {value!r}")


def settings_from(config: ConfigFile | None, overrides: Overrides, default_jax: str, catalog: Catalog) -> Settings:
    """Configuration values, then command-line overrides, over the defaults."""
    values = config.values if config is not None else {}
    source = str(config.path) if config is not None else None
    select = tuple(values.get("select", ("ALL",)))
    if isinstance(values.get("select"), str):
        select = (values["select"],)
    ignore = tuple(_as_list(values.get("ignore", ())))
    extend = tuple(_as_list(values.get("extend-select", ())))
    exclude = DEFAULT_EXCLUDE + tuple(_as_list(values.get("exclude", ())))
    extend_exclude = tuple(_as_list(values.get("extend-exclude", ())))
    per_file = tuple(
        (pattern, tuple(_as_list(codes))) for pattern, codes in values.get("per-file-ignores", {}).items()
    )
    target_jax = values.get("target-jax")
    target_arch = values.get("target-arch", "sm_90a")
    if overrides.select is not None:
        select = overrides.select
    if overrides.ignore is not None:
        ignore = overrides.ignore
    if overrides.exclude is not None:
        exclude = DEFAULT_EXCLUDE + overrides.exclude
    if overrides.target_jax is not None:
        target_jax = overrides.target_jax
    if overrides.target_arch is not None:
        target_arch = overrides.target_arch
    version = catalog.resolve_version(target_jax) if target_jax else default_jax
    return Settings(
        select=select,
        ignore=ignore,
        extend_select=extend + overrides.extend_select,
        target_jax=version,
        target_arch=target_arch,
        show_expected_failures=overrides.show_expected_failures,
        exclude=exclude,
        extend_exclude=extend_exclude + overrides.extend_exclude,
        per_file_ignores=per_file + overrides.per_file_ignores,
        config_file=source,
        project_root=str(config.root) if config is not None else None,
    )


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


class Resolver:
    """Settings per checked path, from the nearest configuration, cached per directory."""

    def __init__(
        self,
        overrides: Overrides,
        default_jax: str,
        config_path: Path | None = None,
        isolated: bool = False,
        catalog: Catalog | None = None,
    ) -> None:
        self.catalog = catalog or load_catalog()
        self.overrides = overrides
        self.default_jax = default_jax
        self.isolated = isolated
        self.fixed: ConfigFile | None = None
        if config_path is not None:
            self.fixed = load_config_file(config_path, self.catalog)
        self._by_dir: dict[Path, Settings] = {}

    def for_path(self, path: Path) -> Settings:
        directory = (path if path.is_dir() else path.parent).resolve()
        cached = self._by_dir.get(directory)
        if cached is not None:
            return cached
        if self.fixed is not None or self.isolated:
            config = self.fixed
        else:
            config = find_config(directory, self.catalog)
        settings = settings_from(config, self.overrides, self.default_jax, self.catalog)
        self._by_dir[directory] = settings
        return settings


def is_excluded(path: Path, settings: Settings) -> bool:
    """Whether `exclude`/`extend-exclude` patterns (relative to the project root) match `path`."""
    patterns = (*settings.exclude, *settings.extend_exclude)
    resolved = path.resolve()
    candidates = [path.name, path.as_posix()]
    if settings.project_root is not None:
        with contextlib.suppress(ValueError):
            candidates.append(resolved.relative_to(settings.project_root).as_posix())
    for pattern in patterns:
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(candidate, pattern.rstrip("/") + "/*"):
                return True
    return False


def describe(settings: Settings) -> str:
    """`--show-settings`: the resolved settings, one per line."""
    lines = [
        f"config file     : {settings.config_file or '(none: defaults)'}",
        f"project root    : {settings.project_root or '(none)'}",
        f"target-jax      : {settings.target_jax}",
        f"target-arch     : {settings.target_arch}",
        f"select          : {', '.join(settings.select)}",
        f"extend-select   : {', '.join(settings.extend_select) or '-'}",
        f"ignore          : {', '.join(settings.ignore) or '-'}",
        "per-file-ignores: "
        + (", ".join(f"{p} = [{', '.join(c)}]" for p, c in settings.per_file_ignores) or "-"),
        f"exclude         : {', '.join(settings.exclude)}",
        f"extend-exclude  : {', '.join(settings.extend_exclude) or '-'}",
    ]
    return "\n".join(lines) + "\n"


__all__ = [
    "ConfigError",
    "ConfigFile",
    "Overrides",
    "Resolver",
    "describe",
    "find_config",
    "is_excluded",
    "replace",
    "settings_from",
]
