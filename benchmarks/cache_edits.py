"""The result cache against a fresh check, over random edits of a small project.

    python benchmarks/cache_edits.py --seeds 1-4 --steps 80

Copies `tests/data/library` (an op, its kernel module, a test that calls it with int8) beside
a helper module and a few files without MMA words, then, `--steps` times per seed: makes one
random edit (a comment anywhere, the accumulator's dtype, a module that shadows `import
matlib`, a helper that starts or stops calling the op, a test deleted or restored, a new
test, another spelling of an import), picks the files to check as pre-commit would (one to
four of them, or now and then the whole project), and runs `mmalint check` on them twice:
with the cache (kept across the steps) and with `--no-cache`. Every pair must print the same
bytes and exit the same way; a pair that does not is printed with its seed, step and edit.
Prints one JSON object; exits 1 when some pair differed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIBRARY = Path(__file__).resolve().parent.parent / "tests" / "data" / "library"
HELPER_MMA = ("import jax.numpy as jnp\n\nimport matlib\n\n\ndef run(a, b):\n"
              "  return matlib.matmul(a.astype(jnp.{dtype}), b.astype(jnp.{dtype}))\n")
HELPER_PLAIN = "def run(a, b):\n  return a\n"
IMPORT_A = "from matlib.kernels.common import K, M, N, mma_tile"
IMPORT_B = "from matlib.kernels import common as _c\nK, M, N, mma_tile = _c.K, _c.M, _c.N, _c.mma_tile"
USES = [
    "import helpers\n\n\ndef test_int8(a, b):\n  return helpers.run(a, b)\n",
    "from helpers import run\n\n\ndef test_x(a, b):\n  return run(a, b)\n",
    "import os\n",
]


class Project:
    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root = root
        self.rng = rng
        shutil.copytree(LIBRARY, root, ignore=shutil.ignore_patterns(".mmalint_cache"))
        (root / "tests" / "helpers.py").write_text(HELPER_PLAIN)
        (root / "tests" / "uses_helpers.py").write_text(USES[0])
        (root / "notes.py").write_text("import os\n\nHOME = os.sep\n")
        self.deleted = root.parent / "ops_test.py.deleted"

    def files(self) -> list[str]:
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*.py"))

    def edit(self) -> str:
        rng, root = self.rng, self.root
        kind = rng.randrange(8)
        if kind == 0:
            name = rng.choice(self.files())
            path = root / name
            path.write_text(path.read_text() + "# edited\n")
            return f"a comment in {name}"
        if kind == 1:
            common = root / "src" / "matlib" / "kernels" / "common.py"
            text = common.read_text()
            old, new = "jnp.zeros((M, N), acc_dtype)", "jnp.zeros((M, N), jnp.int32)"
            common.write_text(text.replace(old, new) if old in text else text.replace(new, old))
            return "the accumulator's dtype"
        if kind == 2:
            shadow = root / "tests" / "matlib.py"
            if shadow.exists():
                shadow.unlink()
                return "tests/matlib.py removed"
            shadow.write_text("M, N, K = 1, 1, 1\n\n\ndef matmul(a, b):\n  return a\n")
            return "tests/matlib.py shadows matlib"
        if kind == 3:
            dtype = rng.choice(["int8", "uint8", "bfloat16", None])
            (root / "tests" / "helpers.py").write_text(HELPER_MMA.format(dtype=dtype) if dtype else HELPER_PLAIN)
            return f"the helper calls matmul with {dtype}"
        if kind == 4:
            test = root / "tests" / "ops_test.py"
            if test.exists():
                shutil.move(test, self.deleted)
                return "tests/ops_test.py deleted"
            if self.deleted.exists():
                shutil.move(self.deleted, test)
                return "tests/ops_test.py restored"
            return "nothing"
        if kind == 5:
            n = rng.randrange(3)
            dtype = rng.choice(["uint8", "int8", "float16"])
            (root / "tests" / f"new{n}_test.py").write_text(
                f"import jax.numpy as jnp\n\nimport matlib\n\n\ndef test_q(a, b):\n"
                f"  return matlib.matmul(a.astype(jnp.{dtype}), b)\n")
            return f"tests/new{n}_test.py with {dtype}"
        if kind == 6:
            ops = root / "src" / "matlib" / "ops.py"
            text = ops.read_text()
            ops.write_text(text.replace(IMPORT_A, IMPORT_B) if IMPORT_A in text else text.replace(IMPORT_B, IMPORT_A))
            return "another spelling of ops.py's import"
        choice = rng.randrange(len(USES))
        (root / "tests" / "uses_helpers.py").write_text(USES[choice])
        return f"tests/uses_helpers.py as {choice}"


def check(root: Path, names: list[str], cache: Path | None) -> tuple[int, str, str]:
    flags = ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
    proc = subprocess.run([sys.executable, "-m", "mmalint", "check", "--target-jax", "0.11", "--format", "concise",
                           *flags, *names], cwd=root, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def seeds(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="1-4", help="a seed or a range, e.g. 1-4")
    parser.add_argument("--steps", type=int, default=80)
    args = parser.parse_args()
    start = time.perf_counter()
    pairs = differed = 0
    for seed in seeds(args.seeds):
        rng = random.Random(seed)
        with tempfile.TemporaryDirectory(prefix="mmalint-cache-edits-") as top:
            project = Project(Path(top) / "lib", rng)
            cache = Path(top) / "cache"
            for step in range(args.steps):
                edit = project.edit()
                files = project.files()
                names = rng.sample(files, rng.randint(1, min(4, len(files)))) if rng.random() < 0.8 else ["."]
                cached, fresh = check(project.root, names, cache), check(project.root, names, None)
                pairs += 1
                if cached[:2] != fresh[:2]:
                    differed += 1
                    print(f"seed {seed}, step {step}, after {edit}, checking {names}:\n"
                          f"  with the cache: {cached}\n  without: {fresh}", file=sys.stderr)
    print(json.dumps({"seeds": args.seeds, "steps": args.steps, "pairs": pairs, "differed": differed,
                      "seconds": round(time.perf_counter() - start, 1)}))
    return 1 if differed else 0


if __name__ == "__main__":
    sys.exit(main())
