# A federated round over adapters: --lora-apply with a server optimizer takes input 1 as the round's global model
# and each adapter folded into it as a client's model, so the pseudo-gradient is the clients' mean update. FedAdam
# (--server-opt adam, weighted by num_examples 10:30:20) gives next = W + lr*m/(sqrt(v)+tau) with m = 0.1*D and
# v = 0.99*tau^2 + 0.01*D^2 (wavg-federated(7), no bias correction), D the numpy float64 mean update (the head:
# the clients' saved heads' mean minus the base's), within float32 rounding; --state keeps m and v as for a full
# model, and a second round from the same global model carries them on (m = 0.19*D, round 2).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" "$SAMPLES/lora/base.safetensors" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" "$SAMPLES/lora/client3" .
/usr/bin/python3 -c 'from lora_tools import set_examples; set_examples({"client1": 10, "client2": 30, "client3": 20})'
"$WAVG" merge --lora-apply base.safetensors client1 client2 client3 --weight-by num_examples --server-opt adam \
  --server-lr 0.5 --state state.safetensors -o next.safetensors
cp state.safetensors state1.safetensors
"$WAVG" merge -q --lora-apply base.safetensors client1 client2 client3 --weight-by num_examples --server-opt adam \
  --server-lr 0.5 --state state.safetensors -o next2.safetensors
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
from lora_tools import mean_update
base = {n: v.astype(np.float64) for n, v in read_safetensors("base.safetensors")[0].items()}
updates, others = mean_update(["client1", "client2", "client3"], [1, 3, 2])
delta = {m[len("base_model.model."):] + ".weight": dw for m, dw in updates.items()}
delta["head.weight"] = others["base_model.model.head.weight"] - base["head.weight"]
tau, lr = 1e-3, 0.5
nxt = read_safetensors("next.safetensors")[0]
s1, s2 = read_safetensors("state1.safetensors")[0], read_safetensors("state.safetensors")[0]
for n, d in delta.items():
    m, v = 0.1 * d, 0.99 * tau ** 2 + 0.01 * d ** 2
    assert np.allclose(s1["m/" + n], m, rtol=1e-5, atol=1e-7), (n, s1["m/" + n], m)
    assert np.allclose(s1["v/" + n], v, rtol=1e-5, atol=1e-9), n
    assert np.allclose(nxt[n], base[n] + lr * m / (np.sqrt(v) + tau), rtol=1e-5, atol=1e-6), (n, nxt[n])
    assert np.allclose(s2["m/" + n], 0.19 * d, rtol=1e-5, atol=1e-7), n
assert int(s1["round"]) == 1 and int(s2["round"]) == 2, (s1["round"], s2["round"])
print("FedAdam over adapters: numpy's step, the state carried on")
PY
