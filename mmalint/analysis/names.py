"""Canonical names for the jax APIs the analysis models.

Every import spelling and re-export resolves to one short canonical name before anything is
matched (`mgpu.mma`, `plgpu.Layout.MMA_LHS`, `jnp.zeros`), in the way TorchFix does it, so
`from jax.experimental.mosaic.gpu.mma import mma` and `mgpu.mma` are the same API.
"""

from __future__ import annotations

# Full dotted module path -> canonical module name.
MODULES: dict[str, str] = {
    "jax": "jax",
    "jax.numpy": "jnp",
    "jax.lax": "lax",
    "jax.random": "jax.random",
    "jax.experimental": "jax.experimental",
    "jax.experimental.mosaic": "jax.experimental.mosaic",
    "jax.experimental.mosaic.gpu": "mgpu",
    "jax.experimental.mosaic.gpu.fragmented_array": "mgpu.fragmented_array",
    "jax.experimental.mosaic.gpu.utils": "mgpu.utils",
    "jax.experimental.mosaic.gpu.mma": "mgpu.mma_module",
    "jax.experimental.mosaic.gpu.core": "mgpu.core",
    "jax.experimental.mosaic.gpu.layouts": "mgpu.layouts",
    "jax.experimental.mosaic.gpu.wgmma": "mgpu.wgmma_module",
    "jax.experimental.mosaic.gpu.tcgen05": "mgpu.tcgen05",
    "jax.experimental.mosaic.gpu.launch_context": "mgpu.launch_context",
    "jax._src.lib.mlir": "mlir",
    "jax._src.lib.mlir.ir": "ir",
    "jaxlib.mlir": "mlir",
    "jaxlib.mlir.ir": "ir",
    "mlir.ir": "ir",
    "jax._src.lib.mlir.dialects": "mlir.dialects",
    "jaxlib.mlir.dialects": "mlir.dialects",
    "mlir.dialects": "mlir.dialects",
    "jax._src.lib.mlir.dialects.arith": "arith",
    "jaxlib.mlir.dialects.arith": "arith",
    "mlir.dialects.arith": "arith",
    "jax._src.interpreters.mlir": "jax.mlir",
    "jax.interpreters.mlir": "jax.mlir",
    "jax.experimental.pallas": "pl",
    "jax._src.pallas": "pl",
    "jax._src.pallas.core": "pl",
    "jax._src.pallas.pallas_call": "pl",
    "jax._src.pallas.primitives": "pl",
    "jax.experimental.pallas.mosaic_gpu": "plgpu",
    "jax._src.pallas.mosaic_gpu": "plgpu.private",
    "jax._src.pallas.mosaic_gpu.primitives": "plgpu",
    "jax._src.pallas.mosaic_gpu.core": "plgpu",
    "jax._src.pallas.mosaic_gpu.pipeline": "plgpu",
    "jax._src.pallas.mosaic_gpu.helpers": "plgpu",
    "jax._src.dtypes": "jax.dtypes",
    "jax.dtypes": "jax.dtypes",
    "jax._src.test_util": "jtu",
    "jax.test_util": "jtu",
    "numpy": "np",
    "ml_dtypes": "ml_dtypes",
    "functools": "functools",
    "dataclasses": "dataclasses",
    "itertools": "itertools",
    "math": "math",
    "absl.testing.parameterized": "parameterized",
    "absl.testing": "absl.testing",
    "absl.testing.absltest": "absltest",
    "pytest": "pytest",
    "unittest": "unittest",
}

# `from PKG import NAME` where NAME is both a submodule and a re-exported attribute: the package
# attribute wins, as Python gives it (`from jax.experimental.mosaic.gpu import mma` is the function).
SHADOWED_SUBMODULES: frozenset[tuple[str, str]] = frozenset(
    {
        ("jax.experimental.mosaic.gpu", "mma"),
        ("jax.experimental.mosaic.gpu", "wgmma"),
    }
)

# Every canonical module name of a library: a name under one of them is the library's.
_LIBRARY_MODULES: frozenset[str] = frozenset(MODULES.values())

# Modules whose attributes live in the namespace of another canonical module.
_NAMESPACE_OF: dict[str, str] = {
    "mgpu.fragmented_array": "mgpu",
    "mgpu.mma_module": "mgpu",
    "mgpu.core": "mgpu",
    "mgpu.layouts": "mgpu",
    "mgpu.wgmma_module": "mgpu",
    "mgpu.launch_context": "mgpu",
    "plgpu.private": "plgpu",
}

# Names `jax.experimental.mosaic.gpu` re-exports from its `utils` module.
_MGPU_UTILS_REEXPORTS: frozenset[str] = frozenset(
    {
        "bitwidth", "bytewidth", "c", "ds", "memref_slice", "memref_transpose", "memref_reshape",
        "memref_fold", "memref_unfold", "memref_unsqueeze", "tile_shape", "thread_idx",
        "warp_idx", "warpgroup_idx", "single_thread", "when", "fori", "debug_print",
    }
)

_SUBMODULE_ATTRS: dict[str, dict[str, str]] = {
    "jax": {
        "numpy": "jnp", "lax": "lax", "random": "jax.random", "experimental": "jax.experimental",
        "dtypes": "jax.dtypes",
    },
    "jax.experimental": {"mosaic": "jax.experimental.mosaic", "pallas": "pl"},
    "jax.experimental.mosaic": {"gpu": "mgpu"},
    "mgpu": {
        "fragmented_array": "mgpu.fragmented_array", "utils": "mgpu.utils", "core": "mgpu.core",
        "layouts": "mgpu.layouts", "tcgen05": "mgpu.tcgen05",
        "launch_context": "mgpu.launch_context",
    },
    "pl": {"mosaic_gpu": "plgpu"},
    "mlir": {"ir": "ir", "dialects": "mlir.dialects"},
    "mlir.dialects": {"arith": "arith"},
    "np": {"random": "np.random", "testing": "np.testing"},
    "absl.testing": {"parameterized": "parameterized", "absltest": "absltest"},
}


# The top-level package whose own sources are checked too: a relative import inside them
# (`from . import utils`) resolves against the file's path.
SOURCE_PACKAGE = "jax"


def shadowing_functions() -> dict[str, str]:
    """The canonical function each shadowing re-export is -> the canonical module it hides.

    Every attribute of such a function (`mma.mma`, `wgmma.WGMMAAccumulator`) is an
    AttributeError in every jax version: `jax/experimental/mosaic/gpu/__init__.py` runs
    `from .mma import mma as mma` (v10:122 v11:123 v12:124), which rebinds the package attribute
    that importing the submodule had set.
    """
    return {
        attribute(module_for_import(package), attr)[0]: MODULES[f"{package}.{attr}"]
        for package, attr in sorted(SHADOWED_SUBMODULES)
    }


def module_for_import(dotted: str) -> str:
    """The canonical module an `import a.b.c` statement names."""
    return MODULES.get(dotted, dotted)


def import_as(dotted: str) -> tuple[str, bool]:
    """(canonical name, is_module) of what `import a.b.c as m` binds to `m`.

    Since Python 3.7 that is `getattr(a.b, "c")` once `a.b.c` is imported, so a package
    attribute that shadows the submodule wins here too:
    `import jax.experimental.mosaic.gpu.mma as m` binds the function `mma`, not the module.
    """
    package, _, attr = dotted.rpartition(".")
    if package and (package, attr) in SHADOWED_SUBMODULES:
        return attribute(module_for_import(package), attr)
    return module_for_import(dotted), True


def is_library(name: str) -> bool:
    """Whether a canonical name belongs to a library whose names mmalint resolves (jax, NumPy,
    MLIR, the stdlib modules it models...), not to code it cannot read (`mylib.from_tensor`)."""
    parts = name.split(".")
    return any(".".join(parts[:i]) in _LIBRARY_MODULES for i in range(1, len(parts) + 1))


def namespace(module: str) -> str:
    return _NAMESPACE_OF.get(module, module)


def attribute(module: str, attr: str) -> tuple[str, bool]:
    """(canonical name, is_module) of `module.attr` for a canonical module name."""
    sub = _SUBMODULE_ATTRS.get(module, {}).get(attr)
    if sub is not None:
        return sub, True
    ns = namespace(module)
    if ns == "mgpu" and attr in _MGPU_UTILS_REEXPORTS:
        return f"mgpu.utils.{attr}", False
    return f"{ns}.{attr}", False


def from_import(package: str, attr: str, relative: bool = False) -> tuple[str, bool]:
    """(canonical name, is_module) of `from package import attr`.

    A relative import (`from . import wgmma`) is written inside the package itself, which its
    `__init__` imports before the re-export that shadows the submodule runs: there it is the
    module (jax's `dialect_lowering.py` calls `wgmma.wgmma(...)` that way).
    """
    full = f"{package}.{attr}"
    if (relative or (package, attr) not in SHADOWED_SUBMODULES) and full in MODULES:
        return MODULES[full], True
    return attribute(module_for_import(package), attr)
