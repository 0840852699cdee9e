"""`mmalint confirm` never runs code of the project it confirms findings for.

Modules that shadow what a worker imports (`json`, `typing`, `numpy`, `jax`, `mmalint`
itself, `sitecustomize`, ...) are planted wherever a worker could see them: the working
directory, the findings file's directory and the checked file's directory (and, for a
worker, a directory on PYTHONPATH: the `mmalint` command itself honours a PYTHONPATH its user
sets, as every Python program does; its workers do not). Each one leaves a marker when
imported. A confirm run must leave none, and its verdicts must be those of a run without them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mmalint.confirm.process import run_worker, worker_command

REPO = Path(__file__).resolve().parents[2]
MMALINT = str(Path(sys.executable).with_name("mmalint"))

# Each planted module records that it ran; `json` then hands over to the real one, as a
# malicious module would to stay unnoticed.
_MARK = "import os as _os\nopen(_os.path.join({marks!r}, {name!r} + '-' + _os.path.basename(_os.path.dirname(_os.path.abspath(__file__)))), 'w').close()\n"
_REEXPORT = (
    "import sys as _sys\n"
    "_here = _os.path.dirname(_os.path.abspath(__file__))\n"
    "del _sys.modules[__name__]\n"
    "_saved = list(_sys.path)\n"
    "_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or '.') != _here]\n"
    "import {name} as _real\n"
    "_sys.path[:] = _saved\n"
    "_sys.modules[__name__] = _real\n"
)
_MODULES = ("json", "typing", "numpy", "runpy", "sitecustomize", "usercustomize",
            "subprocess", "enum", "dataclasses")
_PACKAGES = ("jax", "mmalint", "ml_dtypes", "cupy")


def _plant(directory: Path, marks: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in _MODULES:
        body = _MARK.format(marks=str(marks), name=name)
        if name in ("json", "typing", "enum", "dataclasses", "subprocess", "runpy"):
            body += _REEXPORT.format(name=name)
        (directory / f"{name}.py").write_text(body)
    for name in _PACKAGES:
        (directory / name).mkdir(exist_ok=True)
        (directory / name / "__init__.py").write_text(_MARK.format(marks=str(marks), name=name))


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project with one real finding; (project root, findings file, marker directory)."""
    project = tmp_path / "project"
    kernels = project / "kernels"
    kernels.mkdir(parents=True)
    shutil.copy(REPO / "examples" / "warp_int8_matmul.py", kernels / "warp_int8_matmul.py")
    out = subprocess.run([MMALINT, "check", "--format", "json", "--exit-zero", "kernels"],
                         cwd=project, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    reports = project / "reports"
    reports.mkdir()
    findings = reports / "findings.json"
    findings.write_text(out.stdout)
    assert json.loads(out.stdout), "the example must have a finding to confirm"
    marks = tmp_path / "marks"
    marks.mkdir()
    return project, findings, marks


def _confirm(project: Path, findings: Path, env: dict[str, str]) -> list[dict[str, object]]:
    out = subprocess.run(
        [MMALINT, "confirm", "--format", "json", "--tier", "ptx,jax", "--jobs", "1",
         str(findings.relative_to(project))],
        cwd=project, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode in (0, 1), out.stderr[-3000:]
    verdicts: list[dict[str, object]] = json.loads(out.stdout)
    return verdicts


def _comparable(verdicts: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(v.get("code"), v.get("verdict"), json.dumps(v.get("tiers"), sort_keys=True))
            for v in verdicts]


def test_confirm_imports_nothing_from_the_project(tmp_path: Path) -> None:
    project, findings, marks = _project(tmp_path)
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    clean = _confirm(project, findings, env)

    for place in (project, findings.parent, project / "kernels"):
        _plant(place, marks)
    planted = _confirm(project, findings, env)

    assert sorted(p.name for p in marks.iterdir()) == []
    assert _comparable(planted) == _comparable(clean)


def test_worker_sees_only_its_own_package(tmp_path: Path) -> None:
    """What a worker can import: stdlib, site-packages, mmalint; not the working directory."""
    marks = tmp_path / "marks"
    marks.mkdir()
    cwd, on_path = tmp_path / "cwd", tmp_path / "on_pythonpath"
    _plant(cwd, marks)
    _plant(on_path, marks)
    probe = tmp_path / "trusted"
    probe.mkdir()
    (probe / "probe_worker.py").write_text(
        "import json, sys, os\n"
        "import mmalint\n"
        "print('MMALINT-RECORD ' + json.dumps({'part': 'env', 'path': sys.path,"
        " 'mmalint': os.path.realpath(mmalint.__file__), 'cwd': os.getcwd()}))\n")
    old = Path.cwd()
    os.chdir(cwd)
    try:
        outcome = run_worker(sys.executable, "probe_worker", {}, timeout=60,
                             env={"PYTHONPATH": f"{on_path}{os.pathsep}{cwd}",
                                  "PYTHONSTARTUP": str(on_path / "json.py")},
                             search_path=[str(probe)])
    finally:
        os.chdir(old)
    record = outcome.part("env")
    assert record is not None, outcome.stderr_tail
    assert Path(str(record["mmalint"])).resolve().parent == (REPO / "mmalint").resolve()
    seen = [Path(p).resolve() for p in record["path"] if p]
    assert cwd.resolve() not in seen and on_path.resolve() not in seen
    assert Path(str(record["cwd"])).resolve() != cwd.resolve()
    assert list(marks.iterdir()) == []


@pytest.mark.parametrize("module", ["x", "mmalint.confirm.jax_worker"])
def test_worker_command_is_isolated(module: str) -> None:
    command = worker_command(sys.executable, module, ["/lib"])
    assert command[1] == "-I" and "-m" not in command
