# PEFT adapter folders merge, by default, into their mean update written as an adapter with stacked factors
# (FLoRA's construction): three clients of ranks 2 (q_proj) and 1 (v_proj) weighted 1:2:1 give an adapter whose
# config says r 6 and v_proj rank 3 (rank_pattern), whose s*B*A equals numpy's float64 sum_i w_i s_i B_i A_i for
# every module, whose A is the clients' A stacked bit for bit, and whose saved head module is the weighted mean;
# with a client of rank 4 (and lora_alpha 8: the same scale 2) the ranks add up to 6 and 5.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" .
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" "$SAMPLES/lora/client3" "$SAMPLES/lora/rank4" .
"$WAVG" merge client1 client2 client3 -w 1,2,1 -o avg/
"$WAVG" merge -q client1 rank4 -o mixed/
/usr/bin/python3 - <<'PY'
import json, numpy as np
from hf_tools import read_safetensors
from lora_tools import mean_update, read_adapter, update_of
for out, clients, weights, ranks in (("avg", ["client1", "client2", "client3"], [1, 2, 1], (6, 3)),
                                     ("mixed", ["client1", "rank4"], [1, 1], (6, 5))):
    config, modules, other = read_adapter(out)
    assert config["r"] == ranks[0] and config["rank_pattern"] == {"layers.0.v_proj": ranks[1]}, config
    assert config["lora_alpha"] == 4 and config["alpha_pattern"] == {"v_proj": 2}, config
    want, want_other = mean_update(clients, weights)
    got = update_of(out)
    assert sorted(got) == sorted(want)
    for m in want:
        assert np.allclose(got[m], want[m], rtol=1e-6, atol=1e-6), (out, m, got[m], want[m])
        stacked = np.concatenate([read_adapter(c)[1][m][0] for c in clients])
        assert np.array_equal(modules[m][0], stacked), (out, m)
    for n in want_other:
        assert np.allclose(other[n], want_other[n], rtol=1e-6), (out, n)
    _, meta = read_safetensors(out + "/adapter_model.safetensors")
    assert meta["format"] == "pt" and "wavg_version" in meta, meta
print("exact mean update, stacked")
PY
