"""Synthesized jax kernels around one warp-level MMA call (imported only inside worker
processes, through `families.worker_module("mma", "kernels")`).

`mgpu.mma` is built the way jax's own `test_warp_mma` builds it (`as_gpu_kernel`, one
warpgroup, operands from `load_untiled` with the MMA layouts, B loaded through a transposed
view of an (n, k) buffer); `plgpu.mma` the way Pallas's `test_mma` does (`plgpu.kernel`,
`plgpu.load(..., layout=Layout.MMA_*)`, the accumulator a `layout_cast` of zeros). Each value
gets exactly the dtype, `is_signed`, layout and shape of the signature, in the order passed.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from mmalint.confirm.families.mma import MGPU_API, PALLAS_API

Spec = dict[str, Any]

# The PTX instruction as it appears in lowered IR (inside an llvm.inline_asm string).
INSTRUCTION = re.compile(r"mma\.sync\.aligned\.m\d+n\d+k\d+(?:\.[a-z0-9]+)+")


def _module(name: str) -> Any:
    """`from parent import leaf`, typed as Any: this code runs against jax 0.10, 0.11 and 0.12,
    whose APIs (and type stubs) differ, so it checks for features at run time instead. Some
    leaves are attributes rather than modules (`jax._src.lib.mlir.ir` in jax 0.11)."""
    parent, _, leaf = name.rpartition(".")
    package = importlib.import_module(parent)
    if hasattr(package, leaf):
        return getattr(package, leaf)
    return importlib.import_module(name)


def loaded_positions(spec: Spec) -> list[int]:
    """Positions (in the order passed) of the values that come from a kernel input."""
    return [i for i, v in enumerate(spec["values"]) if not v["zeros"]]


def memory_shape(value: Spec) -> tuple[int, int]:
    """B operands live in memory as (n, k) and are loaded through a transposed view."""
    r, c = value["shape"]
    return (c, r) if value.get("transposed") else (r, c)


def build_order(spec: Spec) -> list[int]:
    """Positions (in the order passed) in the order the values are built: the program's order,
    so the first construction that fails is the program's."""
    return list(spec.get("build_order") or range(len(spec["values"])))


def input_structs(spec: Spec) -> list[jax.ShapeDtypeStruct]:
    return [
        jax.ShapeDtypeStruct(memory_shape(spec["values"][i]), jnp.dtype(spec["values"][i]["dtype"]))
        for i in loaded_positions(spec)
    ]


def out_struct(spec: Spec) -> jax.ShapeDtypeStruct:
    v = spec["values"][0]  # mma returns a value of the accumulator it was passed
    return jax.ShapeDtypeStruct(tuple(v["shape"]), jnp.dtype(v["dtype"]))


def has_plgpu_mma() -> bool:
    return hasattr(_module("jax.experimental.pallas.mosaic_gpu"), "mma")


def uses_pallas(api: str) -> bool:
    """Whether a call of `api` needs Pallas's Mosaic GPU module."""
    return api == PALLAS_API


def import_apis(*, pallas: bool) -> None:
    """Import what the family's kernels need; what raises here means this jax cannot build
    them at all."""
    importlib.import_module("jax.experimental.mosaic.gpu")
    if pallas:
        importlib.import_module("jax.experimental.pallas.mosaic_gpu")


def missing_api(api: str) -> str | None:
    """The API this jax lacks to build a call of `api` (jax 0.10 has no `plgpu.mma`), or None."""
    if api == PALLAS_API and not has_plgpu_mma():
        return PALLAS_API
    return None


def build_context(spec: Spec) -> AbstractContextManager[None]:
    """What `build` and lowering run inside: an MLIR context for `mgpu.mma` (Pallas makes its
    own)."""
    return mlir_context() if spec["api"] == MGPU_API else contextlib.nullcontext()


def instructions_in(text: str) -> list[str]:
    """The `mma.sync` instructions of a lowered module, each once."""
    return sorted(set(INSTRUCTION.findall(text)))


def _mma_layouts_takes_m_warps(mma_layouts: Any) -> bool:
    return "m_warps" in inspect.signature(mma_layouts.__init__).parameters


def build_mgpu(spec: Spec, in_shapes: Sequence[Any]) -> Callable[..., Any]:
    """`mgpu.as_gpu_kernel` around `mgpu.mma(*values)`; building it runs the body, so every
    check `mma` and `FragmentedArray` make raises here. Needs an MLIR context (see
    `mlir_context`)."""
    mgpu = _module("jax.experimental.mosaic.gpu")
    arith = _module("jax._src.lib.mlir.dialects.arith")
    fa = _module("jax.experimental.mosaic.gpu.fragmented_array")
    utils = _module("jax.experimental.mosaic.gpu.utils")

    values = spec["values"]
    loaded = loaded_positions(spec)

    def layout_of(v: Spec) -> Any:
        kind = v["layout_kind"]
        if kind in ("mma_lhs", "mma_rhs", "mma_acc"):
            kwargs = {}
            # jax 0.10 has no m_warps (always 4): pass it only where the user's code could.
            if v["m_warps"] is not None and (
                    v["m_warps"] != 4 or _mma_layouts_takes_m_warps(mgpu.MMALayouts)):
                kwargs["m_warps"] = v["m_warps"]
            layouts = mgpu.MMALayouts(
                utils.dtype_to_ir_type(jnp.dtype(v["layout_dtype"])), **kwargs)
            return getattr(layouts, {"mma_lhs": "lhs", "mma_rhs": "rhs", "mma_acc": "acc"}[kind])
        if kind == "wgmma":
            return fa.WGMMA_LAYOUT
        if kind == "wgmma_8bit":
            return fa.WGMMA_LAYOUT_8BIT
        return None  # splat or strided

    def build_value(v: Spec, ref: Any) -> Any:
        """One value as the program builds it: splatted, or loaded from `ref` (through the
        transposed view for B), in its layout, or first in `convert_from`'s and then relaid
        out with `to_layout`."""
        is_signed = v["is_signed"]
        convert = v.get("convert_from")
        built_as = {**v, **convert} if convert else v
        if v["zeros"]:
            elt = utils.dtype_to_ir_type(jnp.dtype(v["dtype"]))
            zero = arith.constant(elt, 0 if jnp.issubdtype(v["dtype"], jnp.integer)
                                  or v["dtype"] == "bool" else 0.0)
            value = mgpu.FragmentedArray.splat(
                zero, tuple(v["shape"]), layout_of(built_as), is_signed=is_signed)
        elif built_as["layout_kind"] == "strided":
            value = mgpu.FragmentedArray.load_strided(ref, is_signed=is_signed)
        else:
            if v.get("transposed"):
                ref = utils.memref_transpose(ref, (1, 0))
            value = mgpu.FragmentedArray.load_untiled(
                ref, layout=layout_of(built_as), is_signed=is_signed, optimized=False)
        if convert:
            value = value.to_layout(layout_of(v))
        return value

    def body(ctx: Any, *refs: Any) -> None:
        del ctx
        ref_of = dict(zip(loaded, refs[: len(loaded)], strict=True))
        out = refs[len(loaded)]
        frags: dict[int, Any] = {}
        for i in build_order(spec):
            frags[i] = build_value(values[i], ref_of.get(i))
        mgpu.mma(*(frags[i] for i in range(len(values)))).store_untiled(out, optimized=False)

    return mgpu.as_gpu_kernel(
        body, (1, 1, 1), (128, 1, 1), tuple(in_shapes), out_struct(spec), ())


def build_pallas(spec: Spec) -> Callable[..., Any]:
    """`plgpu.kernel` around `plgpu.mma(*values)` with the signature's lowering semantics.
    The front-end checks run when it is traced, the lowering checks when it is lowered."""
    plgpu = _module("jax.experimental.pallas.mosaic_gpu")

    values = spec["values"]
    loaded = loaded_positions(spec)
    semantics = (plgpu.LoweringSemantics.Warpgroup if spec["semantics"] == "warpgroup"
                 else plgpu.LoweringSemantics.Lane)

    def layout_of(v: Spec) -> Any:
        kind = v["layout_kind"]
        dtype = jnp.dtype(v["layout_dtype"])
        # jax 0.11 ignores m_warps and 0.12 takes it; only a non-default value is worth passing.
        kwargs = {"m_warps": v["m_warps"]} if v["m_warps"] not in (None, 4) else {}
        if kind == "wgmma":
            return plgpu.Layout.WGMMA
        if kind == "wgmma_8bit":
            return plgpu.Layout.WGMMA_8BIT
        role_kind = kind if kind in ("mma_lhs", "mma_rhs", "mma_acc") else "mma_" + {
            "lhs": "lhs", "rhs": "rhs", "acc": "acc"}[v["role"]]
        maker = {"mma_lhs": plgpu.Layout.MMA_LHS, "mma_rhs": plgpu.Layout.MMA_RHS,
                 "mma_acc": plgpu.Layout.MMA_ACC}[role_kind]
        return maker(dtype, **kwargs)

    def build_value(v: Spec, ref: Any) -> Any:
        """One value as the program builds it: `jnp.zeros` (cast to its layout unless it is
        a splat), or `plgpu.load(ref, layout=...)` (`ref.T` for B); with `convert_from`, first
        in that layout and then `layout_cast` to its own."""
        convert = v.get("convert_from")
        built_as = {**v, **convert} if convert else v
        if v["zeros"]:
            value = jnp.zeros(tuple(v["shape"]), jnp.dtype(v["dtype"]))
            if built_as["layout_kind"] != "splat":
                value = plgpu.layout_cast(value, layout_of(built_as))
        else:
            if v.get("transposed"):
                ref = ref.T
            if built_as["layout_kind"] == "strided":
                value = plgpu.load(ref, optimized=False)
            else:
                value = plgpu.load(ref, layout=layout_of(built_as), optimized=False)
        if convert and v["layout_kind"] not in ("splat", "strided"):
            value = plgpu.layout_cast(value, layout_of(v))
        return value

    def body(*refs: Any) -> None:
        ref_of = dict(zip(loaded, refs[: len(loaded)], strict=True))
        o_ref = refs[len(loaded)]
        vals: dict[int, Any] = {}
        for i in build_order(spec):
            vals[i] = build_value(values[i], ref_of.get(i))
        o_ref[...] = plgpu.mma(*(vals[i] for i in range(len(values))))

    return plgpu.kernel(
        body, out_type=out_struct(spec),
        compiler_params=plgpu.CompilerParams(lowering_semantics=semantics),
    )


@contextlib.contextmanager
def mlir_context() -> Iterator[None]:
    """An MLIR context with the Mosaic GPU dialect registered, as jax's tests set up."""
    mgpu = _module("jax.experimental.mosaic.gpu")
    mlir = _module("jax._src.interpreters.mlir")
    ir = _module("jax._src.lib.mlir.ir")
    ctx = mlir.make_ir_context()
    if getattr(mgpu, "dialect", None) is not None:
        mgpu.dialect.register_dialect(ctx)
    with ctx, ir.Location.unknown():
        yield


def build(spec: Spec) -> tuple[Callable[..., Any], list[jax.ShapeDtypeStruct]]:
    """The jitted kernel for `spec` and the structs of its inputs (for `mgpu.mma`, call it
    inside `mlir_context()` and keep the context for lowering and running)."""
    if spec.get("x64"):
        jax.config.update("jax_enable_x64", True)
    structs = input_structs(spec)
    if spec["api"] == PALLAS_API:
        return build_pallas(spec), structs
    return build_mgpu(spec, structs), structs


def lowered_text(fn: Callable[..., Any], structs: Sequence[Any]) -> str:
    """Lower for CUDA on whatever machine this is (no GPU needed) and return the module text."""
    lowered = jax.jit(fn).trace(*structs).lower(lowering_platforms=("cuda",))
    return str(lowered.as_text())


def as_device_array(values: np.ndarray, dtype: str) -> np.ndarray:
    """Exact values -> a NumPy array of the jax dtype (ml_dtypes for bf16, fp8, int4)."""
    return np.asarray(values).astype(jnp.dtype(dtype))


def probe_api(probe: str) -> dict[str, Any]:
    """Try one API whose presence depends on the jax version (MMA501, `availability.py`).

    Raises what the installed jax raises for it; otherwise returns `status` "present" with
    what was tried, or for a keyword that some versions accept and drop, "honoured" or
    "ignored" (the layout it gives against the one the keyword asks for).
    """
    with mlir_context():
        mgpu = _module("jax.experimental.mosaic.gpu")
        utils = _module("jax.experimental.mosaic.gpu.utils")
        f16 = utils.dtype_to_ir_type(jnp.dtype("float16"))
        if probe == "mmalayouts-m-warps":
            mgpu.MMALayouts(f16, m_warps=2)
            return {"status": "present", "note": "MMALayouts(f16, m_warps=2) builds"}
        if probe == "mmalayouts-for-shape":
            getattr(mgpu.MMALayouts, "for_shape")  # noqa: B009 (the lookup is the probe)
            return {"status": "present", "note": "MMALayouts.for_shape exists"}
        if probe == "mmalayouts-dtype-argument":
            layouts = mgpu.MMALayouts(jnp.float16)
            _ = (layouts.lhs, layouts.rhs, layouts.acc)
            return {"status": "present", "note": "MMALayouts(jnp.float16) builds"}
        if probe == "mmalayouts-f64":
            layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.dtype("float64")))
            _ = (layouts.lhs, layouts.rhs, layouts.acc)
            return {"status": "present", "note": "MMALayouts(f64) builds"}
        plgpu = _module("jax.experimental.pallas.mosaic_gpu")
        if probe == "plgpu-mma":
            getattr(plgpu, "mma")  # noqa: B009
            return {"status": "present", "note": "plgpu.mma exists"}
        if probe.startswith("pallas-mma-") and probe.endswith("-layout"):
            name = "MMA_" + probe.split("-")[2].upper()
            getattr(plgpu.Layout, name)
            return {"status": "present", "note": f"plgpu.Layout.{name} exists"}
        if probe == "pallas-layout-m-warps":
            got = plgpu.Layout.MMA_LHS(jnp.float16, m_warps=2).to_mgpu()
            if _mma_layouts_takes_m_warps(mgpu.MMALayouts):
                asked = mgpu.MMALayouts(f16, m_warps=2).lhs
                if got == asked:
                    return {"status": "honoured", "note": "plgpu.Layout.MMA_LHS(float16, "
                            "m_warps=2) is MMALayouts(f16, m_warps=2).lhs"}
            if got == mgpu.MMALayouts(f16).lhs:
                return {"status": "ignored", "note": "plgpu.Layout.MMA_LHS(float16, m_warps=2) "
                        "is the m_warps=4 layout MMALayouts(f16).lhs: the keyword is dropped"}
            return {"status": "present", "note": f"plgpu.Layout.MMA_LHS(float16, m_warps=2) "
                    f"is {got}"}
    raise KeyError(f"unknown API probe {probe!r}")
