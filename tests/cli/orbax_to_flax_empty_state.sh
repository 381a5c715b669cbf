# A Flax msgpack written from an Orbax TrainState holds what flax.serialization.to_bytes writes for the same
# TrainState (flax 0.12.8, optax 0.2.8): optax.adam's state is the tuple (ScaleByAdamState, EmptyState), which flax
# writes as opt_state {"0": {count, mu, nu}, "1": {}}; Orbax records the EmptyState as a leaf of value type None.
"$WAVG" convert -q "$ROOT/tests/orbax/train_1" -o t.msgpack
/usr/bin/python3 - <<'PY'
import msgpack
tree = msgpack.unpackb(open("t.msgpack", "rb").read(), raw=False)
opt = tree["opt_state"]
print(sorted(tree), sorted(opt), sorted(opt["0"]), opt["1"])
PY
