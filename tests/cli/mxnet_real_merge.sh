# The real MXNet files merge: the Gluon pair (X1, V2 arrays) and the three Module epochs (X2, legacy arrays, arg:
# names). Every merged value equals numpy's float64 mean rounded to float32, read by a parser written from MXNet's
# sources (mxnet_tools.py); the outputs are V2 arrays with input 1's names in input 1's order.
X1=$SHARED/real-checkpoints/mxnet-jonggon-gluon-logreg
X2=$SHARED/real-checkpoints/mxnet-jonggon-module-lotto
[ -d "$X1" ] && [ -d "$X2" ] || { echo "no MXNet files in $SHARED"; exit 77; }
"$WAVG" merge -q "$X1"/MNIST-100.params "$X1"/FashionMNIST-100.params -o gluon.params
"$WAVG" merge -q "$X2"/Lotto_Net-10000.params "$X2"/Lotto_Net-20000.params "$X2"/Lotto_Net-60000.params \
  -o module.params
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$X1" "$X2" <<'PY'
import sys
import numpy as np
import mxnet_tools as mx
x1, x2 = sys.argv[1:]
for out, ins in (("gluon.params", [f"{x1}/MNIST-100.params", f"{x1}/FashionMNIST-100.params"]),
                 ("module.params", [f"{x2}/Lotto_Net-{e}.params" for e in (10000, 20000, 60000)])):
    names, arrays, encodings = mx.load(out)
    first_names, first_arrays, first_enc = mx.load(ins[0])
    assert names == first_names, (names, first_names)
    assert set(encodings) == {"V2"}, encodings
    loaded = [mx.load_dict(p) for p in ins]
    for name, got in zip(names, arrays):
        want = np.mean(np.stack([d[name] for d in loaded]).astype(np.float64), axis=0).astype(np.float32)
        assert got.dtype == np.float32 and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name
    print(out, len(names), "arrays, inputs", sorted(set(first_enc)))
PY
