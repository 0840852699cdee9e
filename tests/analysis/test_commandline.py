"""argparse (`mmalint/analysis/models/commandline.py`): a script run as written gets every
option's default; a list of strings given to `parse_args` is parsed; anything past what is
modelled leaves the options unknown (no finding).

Each test writes a project whose `mm/kernel.py` runs `tile_mma(dtype)`: int8 operands with a
float32 accumulator are MMA101, bfloat16 is right. `scripts/bench.py` picks the dtype from its
command line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _analysis_lint import lint_project

KERNEL = """
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def tile_mma(dtype):
      t = utils.dtype_to_ir_type(dtype)
      lay = mgpu.MMALayouts(t)
      a = mgpu.FragmentedArray.splat(utils.c(1, t), (64, 32), layout=lay.lhs, is_signed=utils.is_signed(dtype))
      b = mgpu.FragmentedArray.splat(utils.c(1, t), (32, 64), layout=lay.rhs, is_signed=utils.is_signed(dtype))
      f32 = utils.dtype_to_ir_type(jnp.float32)
      acc = mgpu.FragmentedArray.splat(utils.c(0.0, f32), (64, 64), layout=lay.acc)
      return mgpu.mma(acc, a, b)
"""
FOUND = [("MMA101", "kernel.py", 13)]

SCRIPT = """
    import argparse
    import sys

    import jax.numpy as jnp

    from mm.kernel import tile_mma


    def parse(argv=None):
      p = argparse.ArgumentParser(description="times one tile")
    {setup}
      return p.parse_args(argv)


    def main(argv=None):
      args = parse(argv)
      tile_mma(getattr(jnp, args.dtype))
      return 0


    if __name__ == "__main__":
      sys.exit(main({argv}))
"""


def lint(root: Path, setup: str, argv: str = "", extra: dict[str, str] | None = None) -> list[tuple[str | None, str, int]]:
    script = SCRIPT.replace("{setup}", "  " + setup.replace("\n", "\n      ")).replace("{argv}", argv)
    files = {"mm/__init__.py": "", "mm/kernel.py": KERNEL, "scripts/bench.py": script, **(extra or {})}
    return lint_project(root, files, "mm/kernel.py")


@pytest.mark.parametrize(("made", "expect"), [
    ('argparse.ArgumentParser(description="x", allow_abbrev=False)', FOUND),
    # a parent's options (a required one, say) or another default for every option: not read
    ("argparse.ArgumentParser(parents=[BASE])", []),
    ('argparse.ArgumentParser(argument_default="bfloat16")', []),
])
def test_a_parser_made_with_what_changes_its_options_is_not_read(tmp_path: Path, made: str, expect: list[str]) -> None:
    files = {"mm/__init__.py": "", "mm/kernel.py": KERNEL}
    script = SCRIPT.replace('argparse.ArgumentParser(description="times one tile")', made).replace(
        "{setup}", '  p.add_argument("--dtype", default="int8")').replace("{argv}", "")
    script = script.replace("    from mm.kernel import tile_mma\n", "    from mm.kernel import tile_mma\n\n    BASE = argparse.ArgumentParser(add_help=False)\n")
    files["scripts/bench.py"] = script
    assert lint_project(tmp_path, files, "mm/kernel.py") == expect


@pytest.mark.parametrize(("setup", "expect"), [
    # run as written: the default
    ('p.add_argument("--dtype", default="int8")', FOUND),
    ('p.add_argument("--dtype", default="bfloat16")', []),
    ('p.add_argument("--dtype", "-d", default="int8", choices=("int8", "bfloat16"), help="operands")', FOUND),
    ('p.add_argument("--operand-dtype", dest="dtype", default="int8")', FOUND),
    # a string default goes through `type`, as argparse converts it
    ('p.add_argument("--dtype", type=lambda s: s.lower(), default="INT8")', FOUND),
    ('p.add_argument("--dtype", type=lambda s: s.lower(), default="BFLOAT16")', []),
    # the parser's defaults win over the option's
    ('p.add_argument("--dtype", default="bfloat16")\np.set_defaults(dtype="int8")', FOUND),
    ('p.add_argument("--dtype", default="int8")\np.set_defaults(dtype="bfloat16")', []),
    # an option group is the parser's
    ('g = p.add_argument_group("kernel")\ng.add_argument("--dtype", default="int8")', FOUND),
    # a required option, or a positional, missing: argparse exits before the kernel
    ('p.add_argument("--dtype", default="int8", required=True)', []),
    ('p.add_argument("dtype", default="int8")', []),
    # set up in a way not modelled: unknown
    ('if sys.platform == "linux":\n  p.add_argument("--dtype", default="int8")', []),
    ('p.add_argument("--dtype", default="int8")\np.add_subparsers()', []),
    ('p.add_argument("--dtype", default="int8", nargs="?")', []),
    ('p.add_argument("--dtype", default="int8", action=Choose)', []),
    ('p.add_argument("--dtype", default="int8")\nplugins.register(p)', []),
    # the script ends where argparse refuses an option (a flag twice, `type` for a flag,
    # `required` for a positional): nothing after it runs
    ('p.add_argument("--dtype", default="int8")\np.add_argument("--dtype", default="int8")', []),
    ('p.add_argument("--dtype", default="int8")\np.add_argument("--fast", action="store_true", type=int)', []),
    ('p.add_argument("--dtype", default="int8")\np.add_argument("n", required=False)', []),
])
def test_a_script_run_as_written_gets_each_options_default(
        tmp_path: Path, setup: str, expect: list[tuple[str, str, int]]) -> None:
    assert lint(tmp_path, setup) == expect


@pytest.mark.parametrize(("argv", "expect"), [
    ('["--dtype", "int8"]', FOUND),
    ('["--dtype=int8"]', FOUND),
    ('["--dtype", "bfloat16"]', []),
    ('["--fast", "--dtype", "int8"]', FOUND),
    # argparse exits: a value not of the choices, an option not known, a missing value
    ('["--dtype", "int4"]', []),
    ('["--dtpye", "int8"]', []),
    ('["--dtype"]', []),
    # an abbreviation of a long option: not read here
    ('["--dt", "int8"]', []),
    # the command line of whatever runs the script: unknown
    ("sys.argv[1:]", []),
])
def test_arguments_given_to_parse_args_are_parsed(tmp_path: Path, argv: str, expect: list[tuple[str, str, int]]) -> None:
    setup = ('p.add_argument("--dtype", default="bfloat16", choices=["int8", "bfloat16"])\n'
             'p.add_argument("--fast", action="store_true")')
    assert lint(tmp_path, setup, argv) == expect


def test_parse_args_outside_a_script_run_reads_an_unknown_command_line(tmp_path: Path) -> None:
    # a test calling main() parses pytest's own arguments: no default is sure
    test = "from scripts.bench import main\n\n\ndef test_main():\n  main()\n"
    extra = {"scripts/__init__.py": "", "tests/test_bench.py": test}
    script = SCRIPT.replace("{setup}", '  p.add_argument("--dtype", default="int8")').replace("{argv}", "")
    script = script[:script.index("    if __name__")]  # no script of its own
    files = {"mm/__init__.py": "", "mm/kernel.py": KERNEL, "scripts/bench.py": script, **extra}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert lint_project(tmp_path / "a", files, "mm/kernel.py") == []
    # the test's own list is parsed
    files["tests/test_bench.py"] = test.replace("  main()", '  main(["--dtype", "int8"])')
    assert lint_project(tmp_path / "b", files, "mm/kernel.py") == FOUND


def test_a_namespace_made_by_hand(tmp_path: Path) -> None:
    test = ("import argparse\n\nfrom scripts.bench import run\n\n\n"
            "def test_run():\n  run(argparse.Namespace(dtype='int8', iters=1))\n")
    script = ("import jax.numpy as jnp\n\nfrom mm.kernel import tile_mma\n\n\n"
              "def run(args):\n  tile_mma(getattr(jnp, args.dtype))\n")
    files = {"mm/__init__.py": "", "mm/kernel.py": KERNEL, "scripts/__init__.py": "",
             "scripts/bench.py": script, "tests/test_bench.py": test}
    assert lint_project(tmp_path, files, "mm/kernel.py") == FOUND
