# MXNet itself reads what wavg writes, and wavg reads what MXNet writes: two Gluon models are saved with
# save_parameters, a Module-style dict of float16/float32/float64 arrays and a plain list with mx.nd.save (V2
# arrays), and a dict with a scalar with npx.save (V3, numpy semantics); wavg merges each pair, and mx.nd.load,
# load_parameters and npx.load read the outputs back, every value equal to numpy's mean.
# MXNet is not a Debian package and needs Python <= 3.8 (mxnet 1.9.1 with numpy < 1.24): set WAVG_MXNET_PYTHON to
# such a python (e.g. a venv with mxnet); without it the test is skipped.
PY=${WAVG_MXNET_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import mxnet' 2>/dev/null || { echo "no WAVG_MXNET_PYTHON with mxnet"; exit 77; }
"$PY" - <<'PY' || exit 1
import mxnet as mx, numpy as np
from mxnet import gluon
for k in (1, 2):
    mx.random.seed(k)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.BatchNorm(), gluon.nn.Dense(2))
    net.initialize(mx.init.Normal(1.0))
    net(mx.nd.ones((4, 5)))
    net.save_parameters(f"g{k}.params")
    rng = np.random.default_rng(k)
    mx.nd.save(f"m{k}.params", {"arg:w": mx.nd.array(rng.standard_normal((3, 4)), dtype="float32"),
                                "arg:h": mx.nd.array(rng.standard_normal(5), dtype="float16"),
                                "aux:d": mx.nd.array(rng.standard_normal((2, 1, 2)), dtype="float64")})
    mx.nd.save(f"l{k}.params", [mx.nd.array(rng.standard_normal(3))])
mx.npx.set_np()
for k in (1, 2):
    rng = np.random.default_rng(10 + k)
    mx.npx.save(f"v{k}.params", {"w": mx.np.array(rng.standard_normal((2, 3)), dtype="float32"),
                                 "s": mx.np.array(rng.standard_normal(), dtype="float64")})
PY
for n in g m l v; do "$WAVG" merge -q ${n}1.params ${n}2.params -o ${n}.params || exit 1; done
"$PY" - <<'PY' 2>/dev/null
import mxnet as mx, numpy as np
from mxnet import gluon
def mean(a, b, dtype):
    return ((a.astype(np.float64) + b.astype(np.float64)) / 2).astype(dtype)
for n in ("g", "m"):
    a, b, got = (mx.nd.load(f) for f in (f"{n}1.params", f"{n}2.params", f"{n}.params"))
    assert list(got) == list(a), (list(got), list(a))
    for k in a:
        want = mean(a[k].asnumpy(), b[k].asnumpy(), a[k].asnumpy().dtype)
        assert got[k].dtype == a[k].dtype and np.array_equal(got[k].asnumpy(), want, equal_nan=True), k
a, b, got = (mx.nd.load(f) for f in ("l1.params", "l2.params", "l.params"))
assert isinstance(got, list) and np.array_equal(got[0].asnumpy(), mean(a[0].asnumpy(), b[0].asnumpy(), np.float32))
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.BatchNorm(), gluon.nn.Dense(2))
net.load_parameters("g.params")
mx.npx.set_np()
a, b, got = (mx.npx.load(f) for f in ("v1.params", "v2.params", "v.params"))
for k in a:
    want = mean(a[k].asnumpy(), b[k].asnumpy(), a[k].asnumpy().dtype)
    assert got[k].shape == a[k].shape and np.array_equal(got[k].asnumpy(), want), k
print("MXNet loads the merged Gluon, Module-style, plain-list and numpy-semantics files")
PY
