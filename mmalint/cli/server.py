"""`mmalint server`: the language server (`mmalint.lsp`) on stdin/stdout, for editors."""

from __future__ import annotations

import argparse

from mmalint.config import UsageError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "server",
        help="run the language server on stdin/stdout (for editors)",
        description="Run the mmalint Language Server over stdio: diagnostics, quick fixes, fix all. "
        "Needs the `lsp` extra: pip install 'mmalint[lsp]'.",
    )
    p.set_defaults(handler=_run_server)


def _run_server(args: argparse.Namespace) -> int:
    try:
        from mmalint.lsp.server import main as server_main
    except ImportError as exc:
        raise UsageError(f"the language server needs pygls: pip install 'mmalint[lsp]' ({exc})") from None
    return server_main()
