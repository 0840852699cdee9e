"""Functions that shadow their own module: `from jax.experimental.mosaic.gpu import mma`.

`jax/experimental/mosaic/gpu/__init__.py` re-exports `from .mma import mma as mma` (and the same
for `wgmma`), which rebinds the package attribute the submodule import had set. So in every jax
version `from jax.experimental.mosaic.gpu import mma` (and `import jax.experimental.mosaic.gpu.mma
as m`) is the function, and `mma.mma(...)` raises `AttributeError: 'function' object has no
attribute 'mma'` before anything of the MMA runs (MMA503).

A call of such an attribute is recorded as a use of it (the finding), and then analysed as the
name the author meant, the module's (`mma.mma(acc, a, b)` as `mma(acc, a, b)`): what jax raises
once the spelling is fixed is reported too, and says that it comes second.
"""

from __future__ import annotations

from mmalint.analysis import names
from mmalint.analysis.host import (
    REGISTRY,
    Bound,
    Call,
    Host,
    Model,
    ModelFn,
    Signature,
    pattern,
    record_use,
)
from mmalint.analysis.values import UNKNOWN, Value

_ANY = Signature.parse("(...)")


def _attribute_of(function: str, module: str) -> None:
    prefix = f"{function}."

    @pattern(prefix)
    def resolve(name: str) -> Model | None:
        first, _, rest = name[len(prefix):].partition(".")
        if not first or first.startswith("__"):
            return None  # `mma.__name__`, `mma.__wrapped__`: a function has those
        meant, _ = names.attribute(module, first)
        if rest:
            meant = f"{meant}.{rest}"
        target = REGISTRY.model_for(meant)
        return Model(_recorded(name, target), target.signature if target is not None else _ANY)


def _recorded(name: str, target: Model | None) -> ModelFn:
    def call(host: Host, args: Bound, call: Call) -> Value:
        record_use(host, name, args, call)
        return target.fn(host, args, call) if target is not None else UNKNOWN

    return call


for _function, _module in names.shadowing_functions().items():
    _attribute_of(_function, _module)
