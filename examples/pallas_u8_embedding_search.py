"""Brute-force similarity search over uint8-quantized embeddings in Pallas.

scores (Q, DB) int32 = queries (Q, D) @ database (DB, D).T for uint8
embeddings (per-dimension min/max quantized to 0..255). Each CTA scores all
queries against one BLOCK_DB-row block of the database with the warp-level
`plgpu.mma`; the host takes the top-k per query.

Run on an sm_80+ GPU:  python pallas_u8_embedding_search.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

Q, DB, D = 64, 512, 128
BLOCK_DB = 128
DTYPE = jnp.uint8


def search_body(q_ref, db_ref, scores_ref):
  j = jax.lax.axis_index("db")
  cols = pl.ds(j * BLOCK_DB, BLOCK_DB)
  acc = plgpu.layout_cast(
      jnp.zeros((Q, BLOCK_DB), jnp.int32), plgpu.Layout.MMA_ACC(DTYPE)
  )
  q = plgpu.load(q_ref, layout=plgpu.Layout.MMA_LHS(DTYPE), optimized=False)
  db = plgpu.load(db_ref.at[cols].T, layout=plgpu.Layout.MMA_RHS(DTYPE),
                  optimized=False)
  scores_ref[:, cols] = plgpu.mma(acc, q, db)


search = plgpu.kernel(
    search_body,
    out_type=jax.ShapeDtypeStruct((Q, DB), jnp.int32),
    grid=(DB // BLOCK_DB,),
    grid_names=("db",),
    compiler_params=plgpu.CompilerParams(
        lowering_semantics=plgpu.LoweringSemantics.Warpgroup
    ),
)


def main():
  rng = np.random.default_rng(0)
  queries = jnp.asarray(rng.integers(0, 256, (Q, D)), DTYPE)
  database = jnp.asarray(rng.integers(0, 256, (DB, D)), DTYPE)
  scores = np.asarray(search(queries, database))
  ref = np.asarray(queries, np.int64) @ np.asarray(database, np.int64).T
  np.testing.assert_array_equal(scores, ref)
  top5 = np.argsort(-scores, axis=1)[:, :5]
  print("embedding search: OK, top-5 for query 0:", top5[0])


if __name__ == "__main__":
  main()
