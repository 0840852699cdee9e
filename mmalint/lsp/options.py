"""The server's settings, from `initializationOptions` or the workspace's `mmalint` settings
(pushed with `workspace/didChangeConfiguration` or pulled with `workspace/configuration`).

A bad value never stops the server: it is reported (`Problem`, shown to the user) and the
default is used instead, so diagnostics keep coming.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from lsprotocol import types as lsp

from mmalint.catalog import Catalog
from mmalint.config import UsageError, resolve_target_jax, validate_selectors
from mmalint.pipeline.options import LintOptions

DEFAULT_DEBOUNCE_S = 0.25
# A lint that takes longer is stopped (its process killed) and reported: far above what a
# real module takes, short enough that a runaway does not hold a core for good.
DEFAULT_LINT_TIMEOUT_S = 120.0
KEYS = (
    "debounce_ms", "report_unused_noqa", "target_jax", "lint_timeout_s",
    "select", "ignore", "config", "unsafe_fixes", "log_level",
)
# The editor extension's own settings (which command starts the server), in the same section.
CLIENT_KEYS = ("path", "interpreter")
# What reaches `window/logMessage`, by the lowest message type a level lets through.
LOG_LEVELS = {
    "error": lsp.MessageType.Error,
    "warning": lsp.MessageType.Warning,
    "info": lsp.MessageType.Info,
    "debug": lsp.MessageType.Log,
}
DEFAULT_LOG_LEVEL = "debug"  # everything, as before the setting existed


@dataclass(frozen=True)
class Problem:
    type: lsp.MessageType
    message: str


@dataclass(frozen=True)
class ServerOptions:
    debounce_s: float = DEFAULT_DEBOUNCE_S
    lint: LintOptions = field(default_factory=LintOptions)
    target_jax: str | None = None  # a catalog version; None: the installed jax, else the newest
    lint_timeout_s: float = DEFAULT_LINT_TIMEOUT_S
    select: tuple[str, ...] | None = None  # None: the configuration decides
    ignore: tuple[str, ...] | None = None
    config: str | None = None  # an explicit configuration file, for every document
    unsafe_fixes: bool = False  # unsafe fixes in fix-all and as quick fixes
    log_level: str = DEFAULT_LOG_LEVEL

    def logs(self, type: lsp.MessageType) -> bool:
        """Whether a message of this type goes to `window/logMessage`."""
        return type <= LOG_LEVELS[self.log_level]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        return None  # `not value >= 0` also refuses NaN
    return float(value)


def parse_options(raw: Any, catalog: Catalog, where: str = "initializationOptions") -> tuple[ServerOptions, list[Problem]]:
    """The options `raw` gives (None or {} for the defaults), and what was wrong with them."""
    if raw is None:
        return ServerOptions(), []
    if not isinstance(raw, dict):
        return ServerOptions(), [Problem(lsp.MessageType.Error, f"mmalint: {where} must be an object, got {raw!r:.80}; using the defaults")]
    problems: list[Problem] = []
    # A null is "not set": an editor sends every key of its settings, unset ones as null.
    raw = {key: value for key, value in raw.items() if value is not None}

    def bad(key: str, expected: str, default: str) -> None:
        problems.append(
            Problem(lsp.MessageType.Error, f"mmalint: {where}.{key} must be {expected}, got {raw[key]!r:.80}; using {default}")
        )

    options = ServerOptions()
    if "debounce_ms" in raw:
        if (ms := _number(raw["debounce_ms"])) is None:
            bad("debounce_ms", "a number of milliseconds", f"{DEFAULT_DEBOUNCE_S * 1000:g}")
        else:
            options = replace(options, debounce_s=ms / 1000)
    if "lint_timeout_s" in raw:
        if not (seconds := _number(raw["lint_timeout_s"])):
            bad("lint_timeout_s", "a positive number of seconds", f"{DEFAULT_LINT_TIMEOUT_S:g}")
        else:
            options = replace(options, lint_timeout_s=seconds)
    if "report_unused_noqa" in raw:
        if not isinstance(raw["report_unused_noqa"], bool):
            bad("report_unused_noqa", "true or false", "false")
        else:
            options = replace(options, lint=LintOptions(report_unused_noqa=raw["report_unused_noqa"]))
    for key in ("select", "ignore"):
        if key not in raw:
            continue
        codes = raw[key]
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            bad(key, 'a list of rule codes or prefixes like ["MMA1"]', "the configuration's")
            continue
        try:
            validate_selectors(tuple(codes), catalog, f"{where}.{key}")
        except UsageError as exc:
            problems.append(Problem(lsp.MessageType.Error, f"mmalint: {exc}; using the configuration's"))
        else:
            options = replace(options, select=tuple(codes)) if key == "select" else replace(options, ignore=tuple(codes))
    if "config" in raw:
        if not isinstance(raw["config"], str) or not raw["config"]:
            bad("config", "the path of a configuration file", "the nearest configuration")
        else:
            options = replace(options, config=raw["config"])
    if "unsafe_fixes" in raw:
        if not isinstance(raw["unsafe_fixes"], bool):
            bad("unsafe_fixes", "true or false", "false")
        else:
            options = replace(options, unsafe_fixes=raw["unsafe_fixes"])
    if "log_level" in raw:
        if not isinstance(raw["log_level"], str) or raw["log_level"] not in LOG_LEVELS:
            bad("log_level", " or ".join(f'"{level}"' for level in LOG_LEVELS), f'"{DEFAULT_LOG_LEVEL}"')
        else:
            options = replace(options, log_level=raw["log_level"])
    requested = raw.get("target_jax")
    if requested is not None:
        default = "the installed jax (or the newest known)"
        if not isinstance(requested, str):
            bad("target_jax", 'a version like "0.11"', default)
        else:
            try:
                version = resolve_target_jax(requested, catalog)
            except UsageError as exc:
                problems.append(Problem(lsp.MessageType.Error, f"mmalint: {where}.target_jax: {str(exc).removeprefix('--target-jax: ')}; using {default}"))
            else:
                options = replace(options, target_jax=version)
    unknown = sorted(set(raw) - set(KEYS) - set(CLIENT_KEYS))
    if unknown:
        problems.append(Problem(lsp.MessageType.Log, f"mmalint: {where}: ignoring unknown option(s) {', '.join(map(str, unknown))}"))
    return options, problems
