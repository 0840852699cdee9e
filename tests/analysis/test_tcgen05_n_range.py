"""The N range of a tcgen05 MMA (MMA719): past 256 only 512 on one CTA, at most 128 per CTA
of a collective pair, checked once the N multiple (MMA703) passes."""

from __future__ import annotations

import pytest
from _analysis_lint import check

KERNEL = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, {n}, 128
TRANSFORMS = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


def body(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, tma_bar, mma_bar):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_bar)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_bar)
  plgpu.barrier_wait(tma_bar)
  plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_bar, accumulate=False{collective})
  plgpu.barrier_wait(mma_bar)
  out_gmem[...] = plgpu.async_load_tmem(acc_tmem)


matmul = plgpu.kernel(
    body,
    out_type=jax.ShapeDtypeStruct((M, N * {ctas}), jnp.float32),
    {cluster}scratch_types=[
        plgpu.SMEM((M, K), jnp.bfloat16, transforms=TRANSFORMS),
        plgpu.SMEM((K, N), jnp.bfloat16, transforms=TRANSFORMS),
        plgpu.TMEM((M, N * {ctas}), jnp.float32{tmem}),
        plgpu.Barrier(),
        plgpu.Barrier(orders_tensor_core=True),
    ],
)
matmul(jnp.ones((M, K), jnp.bfloat16), jnp.ones((K, N), jnp.bfloat16))
'''


def _kernel(n: int, collective: bool) -> str:
    return KERNEL.format(
        n=n, ctas=2 if collective else 1, collective=', collective_axis="x"' if collective else "",
        cluster='cluster=(2,), cluster_names=("x",),\n    ' if collective else "",
        tmem=", collective=True" if collective else "")


@pytest.mark.parametrize(("n", "collective", "expect", "says"), [
    (256, False, [], None),
    (512, False, [], None),
    (384, False, ["MMA719"], "The only supported N > 256, is 512, but got N=384"),
    (1024, False, ["MMA719"], "Only N <= 512 are supported for MMA"),
    (128, True, [], None),
    (192, True, ["MMA719"], "Only N <= 128 are supported for collective MMA"),
    (384, True, ["MMA719"], "The only supported N > 256, is 512, but got N=384"),
    # the N multiple fails first: MMA703 alone
    (260, False, ["MMA703"], None),
])
def test_the_n_range(n: int, collective: bool, expect: list[str], says: str | None) -> None:
    report = check(_kernel(n, collective), expect, target_jax="0.11")
    if says is not None:
        (diag,) = report.diagnostics
        assert diag.predicted_error is not None and says in diag.predicted_error.message
