# The three tinygrad MNIST checkpoints (G6) merge, each tensor equal bit for bit to numpy's float64 mean rounded
# to float32, and the output records wavg's provenance with each input's sha256 (--hash sha256).
G6=$SHARED/real-checkpoints/tinygrad-mnist-linear
[ -d "$G6" ] || { echo "no $G6"; exit 77; }
"$WAVG" merge -q --hash sha256 "$G6"/model_4bc2046.safetensors "$G6"/model_4fe0665.safetensors \
  "$G6"/model_6682ba5.safetensors -o avg.safetensors
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$G6" <<'PY'
import hashlib, json, sys
import numpy as np
import safetensors_tools as st
g6 = sys.argv[1]
names = ["model_4bc2046", "model_4fe0665", "model_6682ba5"]
ins = [st.load(f"{g6}/{n}.safetensors")[1] for n in names]
meta, out = st.load("avg.safetensors")
assert sorted(out) == sorted(ins[0]), (sorted(out), sorted(ins[0]))
for k in out:
    want = np.mean(np.stack([x[k] for x in ins]).astype(np.float64), axis=0).astype(np.float32)
    assert out[k].dtype == np.float32 and out[k].shape == want.shape, k
    assert out[k].tobytes() == want.tobytes(), k
assert meta["wavg_command"] == "merge" and meta["wavg_method"] == "mean", meta
listed = json.loads(meta["wavg_inputs"])
for n, item in zip(names, listed):
    assert item["file"] == f"{g6}/{n}.safetensors"  # as given on the command line
    assert item["sha256"] == hashlib.sha256(open(f"{g6}/{n}.safetensors", "rb").read()).hexdigest()
print("ok", len(out), "tensors")
PY
