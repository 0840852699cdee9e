"""Rule links: the installed pages by default, a published site when the user names one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MMALINT = str(Path(sys.executable).with_name("mmalint"))
EXAMPLE = str(REPO / "examples" / "warp_int8_matmul.py")


def _urls(*args: str, env: dict[str, str] | None = None) -> list[str]:
    out = subprocess.run([MMALINT, "check", "--target-jax", "0.10", "--format", "json",
                          "--exit-zero", *args, EXAMPLE],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stderr
    return [f["url"] for f in json.loads(out.stdout)]


def test_default_links_are_the_installed_pages() -> None:
    urls = _urls()
    assert urls and all(u.startswith("file://") for u in urls)
    for url in urls:
        assert Path(url.removeprefix("file://")).is_file(), url


def test_docs_url_flag_and_environment() -> None:
    assert _urls("--docs-url", "https://example.org/mmalint/rules/")[0] == \
        "https://example.org/mmalint/rules/MMA501.md"
    assert _urls(env={"MMALINT_DOCS_URL": "https://docs.example.org/r"})[0] == \
        "https://docs.example.org/r/MMA501.md"
