"""The bundled reference kernel around one `mma.sync` instruction, as PTX and as CUDA C.

Both kernels compute D = C + A @ B for one warp per 16x8 output tile (grid = M/16 x N/8,
block = 32 threads), looping over the K tiles. Fragments arrive pre-packed per lane
(`fragments.py` does the packing on the host), so the kernels only load registers, issue the
instruction and store: what ptxas or the GPU judges is the instruction itself.
"""

from __future__ import annotations

from mmalint.confirm.families.mma.instruction import MmaInstruction, Registers

KERNEL_NAME = "mmalint_mma"


def _regs(prefix: str, regs: Registers) -> str:
    return "{" + ", ".join(f"%{prefix}{i}" for i in range(regs.count)) + "}"


def _load(prefix: str, regs: Registers, addr: str) -> list[str]:
    return [
        f"  ld.global.{regs.kind} %{prefix}{i}, [{addr}+{i * regs.bytes}];"
        for i in range(regs.count)
    ]


def _store(prefix: str, regs: Registers, addr: str) -> list[str]:
    return [
        f"  st.global.{regs.kind} [{addr}+{i * regs.bytes}], %{prefix}{i};"
        for i in range(regs.count)
    ]


def _fragment_address(dst: str, base: str, outer: str, inner_count: str, inner: str,
                      frag_bytes: int) -> list[str]:
    # index = ((outer * inner_count + inner) * 32 + lane); address = base + index * frag_bytes
    return [
        f"  mad.lo.u32 %idx, {outer}, {inner_count}, {inner};",
        "  mad.lo.u32 %idx, %idx, 32, %lane;",
        f"  mul.wide.u32 %off, %idx, {frag_bytes};",
        f"  add.u64 {dst}, {base}, %off;",
    ]


def ptx_kernel(instr: MmaInstruction, *, arch: str, version: str) -> str:
    """A complete PTX module: `.version`, `.target`, and one `.entry` issuing `instr`."""
    a, b, c = instr.a_regs, instr.b_regs, instr.c_regs
    lines = [
        f".version {version}",
        f".target {arch}",
        ".address_size 64",
        "",
        f".visible .entry {KERNEL_NAME}(",
        "  .param .u64 param_a, .param .u64 param_b, .param .u64 param_c,",
        "  .param .u64 param_d, .param .u32 param_k_tiles, .param .u32 param_n_tiles)",
        "{",
        "  .reg .pred %done;",
        f"  .reg .{a.kind} %a<{a.count}>;",
        f"  .reg .{b.kind} %b<{b.count}>;",
        f"  .reg .{c.kind} %c<{c.count}>;",
        "  .reg .b32 %lane, %mt, %nt, %kt, %k_tiles, %n_tiles, %idx;",
        "  .reg .b64 %pa, %pb, %pc, %pd, %off, %addr;",
        "  ld.param.u64 %pa, [param_a];",
        "  ld.param.u64 %pb, [param_b];",
        "  ld.param.u64 %pc, [param_c];",
        "  ld.param.u64 %pd, [param_d];",
        "  cvta.to.global.u64 %pa, %pa;",
        "  cvta.to.global.u64 %pb, %pb;",
        "  cvta.to.global.u64 %pc, %pc;",
        "  cvta.to.global.u64 %pd, %pd;",
        "  ld.param.u32 %k_tiles, [param_k_tiles];",
        "  ld.param.u32 %n_tiles, [param_n_tiles];",
        "  mov.u32 %lane, %tid.x;",
        "  mov.u32 %mt, %ctaid.x;",
        "  mov.u32 %nt, %ctaid.y;",
        *_fragment_address("%addr", "%pc", "%mt", "%n_tiles", "%nt", c.count * c.bytes),
        *_load("c", c, "%addr"),
        "  mov.u32 %kt, 0;",
        "K_LOOP:",
        "  setp.ge.u32 %done, %kt, %k_tiles;",
        "  @%done bra K_DONE;",
        *_fragment_address("%addr", "%pa", "%mt", "%k_tiles", "%kt", a.count * a.bytes),
        *_load("a", a, "%addr"),
        *_fragment_address("%addr", "%pb", "%kt", "%n_tiles", "%nt", b.count * b.bytes),
        *_load("b", b, "%addr"),
        f"  {instr.text} {_regs('c', c)}, {_regs('a', a)}, {_regs('b', b)}, {_regs('c', c)};",
        "  add.u32 %kt, %kt, 1;",
        "  bra K_LOOP;",
        "K_DONE:",
        *_fragment_address("%addr", "%pd", "%mt", "%n_tiles", "%nt", c.count * c.bytes),
        *_store("c", c, "%addr"),
        "  ret;",
        "}",
        "",
    ]
    return "\n".join(lines)


_C_TYPES = {"b32": ("unsigned int", "r"), "f32": ("float", "f"), "f64": ("double", "d")}


def cuda_kernel(instr: MmaInstruction) -> str:
    """The same kernel in CUDA C with the instruction as inline asm (for NVRTC via CuPy).

    The asm constraints mirror Mosaic's: `r` for packed b32 operands, `f`/`r`/`d` for the
    accumulator, `d` for f64 operands; C and D share registers (`+`), as PTX allows.
    """
    a, b, c = instr.a_regs, instr.b_regs, instr.c_regs
    a_t, a_con = _C_TYPES[a.kind]
    b_t, b_con = _C_TYPES[b.kind]
    c_t, c_con = _C_TYPES[c.kind]
    n = iter(range(c.count + a.count + b.count))
    d_ops = ", ".join(f"%{next(n)}" for _ in range(c.count))
    a_ops = ", ".join(f"%{next(n)}" for _ in range(a.count))
    b_ops = ", ".join(f"%{next(n)}" for _ in range(b.count))
    outs = ", ".join(f'"+{c_con}"(acc[{i}])' for i in range(c.count))
    ins = ", ".join(
        [f'"{a_con}"(a[ai + {i}])' for i in range(a.count)]
        + [f'"{b_con}"(b[bi + {i}])' for i in range(b.count)]
    )
    return f"""
extern "C" __global__ void {KERNEL_NAME}(
    const {a_t}* __restrict__ a, const {b_t}* __restrict__ b,
    const {c_t}* __restrict__ c, {c_t}* __restrict__ d, int k_tiles, int n_tiles) {{
  const int lane = threadIdx.x, mt = blockIdx.x, nt = blockIdx.y;
  const long ci = ((long)(mt * n_tiles + nt) * 32 + lane) * {c.count};
  {c_t} acc[{c.count}];
  for (int i = 0; i < {c.count}; ++i) acc[i] = c[ci + i];
  for (int kt = 0; kt < k_tiles; ++kt) {{
    const long ai = ((long)(mt * k_tiles + kt) * 32 + lane) * {a.count};
    const long bi = ((long)(kt * n_tiles + nt) * 32 + lane) * {b.count};
    asm volatile("{instr.text} {{{d_ops}}}, {{{a_ops}}}, {{{b_ops}}}, {{{d_ops}}};"
                 : {outs}
                 : {ins});
  }}
  for (int i = 0; i < {c.count}; ++i) d[ci + i] = acc[i];
}}
"""
