# Orbax restores what wavg writes (optional: a venv with orbax-checkpoint, flax, optax and jax[cpu], named by
# WAVG_ORBAX_PYTHON; skipped without one). Three TrainStates saved by Orbax (tests/orbax/restore_check.py) in each
# storage mode: OCDBT, per-leaf zarr v3, OCDBT with every kernel split over two devices (a chunk each), and OCDBT
# saved by two real processes (jax.distributed on the CPU, gloo; each process writes its own ocdbt.process_N), merged
# by wavg into an Orbax folder and restored by orbax.checkpoint into the TrainState: every float leaf is the float64
# mean rounded once, count and step are input 1's, and one apply_gradients step runs. The merge converted to
# safetensors and to a Flax msgpack (flax.serialization into the TrainState, optax's EmptyState the {} flax writes)
# holds the same values, as does a merge with --force over an Orbax-written checkpoint.
PY=${WAVG_ORBAX_PYTHON:-}
[ -n "$PY" ] && "$PY" -c "import orbax.checkpoint, flax, optax" 2>/dev/null ||
  { echo "no WAVG_ORBAX_PYTHON with orbax-checkpoint, flax and optax"; exit 77; }
C=$ROOT/tests/orbax/restore_check.py
"$PY" "$C" save . 2>/dev/null
"$PY" "$C" save2 . >/dev/null 2>&1
for mode in ocdbt zarr sharded two; do
  "$WAVG" merge -q ${mode}_1 ${mode}_2 ${mode}_3 -o merged_$mode/
  "$PY" "$C" check . merged_$mode 2>/dev/null
done
# --force over a checkpoint Orbax wrote (its store in d/ and ocdbt.process_0/, retired) restores the same.
cp -r ocdbt_1 merged_force
"$WAVG" merge -q --force ocdbt_1 ocdbt_2 ocdbt_3 -o merged_force/
"$PY" "$C" check . merged_force 2>/dev/null
"$WAVG" convert -q merged_ocdbt -o merged.safetensors
"$WAVG" convert -q merged_ocdbt -o merged.msgpack
"$PY" "$C" safetensors . merged.safetensors 2>/dev/null
"$PY" "$C" flax . merged.msgpack 2>/dev/null
