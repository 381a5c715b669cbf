# Flax files written by flax itself (samples/jax, made by make_jax.py with flax 0.12.8) merge: a TrainState with
# Adam state and step counters, a tree of every dtype with a numpy scalar, a list and Python values, and arrays in
# flax's chunked form. Read back with msgpack-python and numpy (tests/cli/jax_tools.py), every float array equals
# numpy's float64 mean rounded once to its dtype, integer and bool arrays are input 1's (--int-policy first), the
# Python values are input 1's, and the tree has input 1's keys in input 1's order (the chunked arrays come back
# whole: flax wrote them chunked at a limit lowered to 64 bytes, wavg chunks at flax's real one, 1 GiB).
J=$SAMPLES/jax
for n in train dtypes chunked; do "$WAVG" merge -q $J/${n}_a.msgpack $J/${n}_b.msgpack -o $n.msgpack; done
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$J" <<'PY'
import sys
import numpy as np
import jax_tools as jt
j = sys.argv[1]
def keys(t):
    return [(k, keys(v)) if isinstance(v, dict) else k for k, v in t.items()] if isinstance(t, dict) else None
for n in ("train", "dtypes", "chunked"):
    a, b, got = (jt.load_tree(p) for p in (f"{j}/{n}_a.msgpack", f"{j}/{n}_b.msgpack", f"{n}.msgpack"))
    # chunked_a/b were chunked at flax's limit lowered to 64 bytes: wavg chunks above the real limit, 1 GiB.
    assert keys(got) == keys(a) or n == "chunked", n
    (xa, ka), (xb, _), (xg, kg) = jt.flatten(a), jt.flatten(b), jt.flatten(got)
    assert list(xg) == list(xa) and kg == ka, n
    for name, (dtype, va) in xa.items():
        gd, gv = xg[name]
        want = jt.mean([va, xb[name][1]], dtype) if dtype in ("float16", "bfloat16", "float32", "float64") else va
        assert gd == dtype and gv.shape == va.shape, name
        assert np.array_equal(np.asarray(gv, dtype=np.float64), np.asarray(want, dtype=np.float64)), (name, gv, want)
    print(n, len(xa), "arrays,", len(ka), "other values:", ", ".join(sorted(ka)))
PY
# A Flax file converted to a Flax file is flax's own bytes again (every header packed as msgpack-python packs it).
for n in train dtypes; do
  "$WAVG" convert -q $J/${n}_a.msgpack -o same_$n.msgpack && cmp $J/${n}_a.msgpack same_$n.msgpack
done
echo "convert gives flax's bytes back"
