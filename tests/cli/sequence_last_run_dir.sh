# --last 3 on a local-sgd run directory (round-NNNN.h5, final.h5, log.csv, state.json) merges the same tensors,
# to the byte, as naming its last three rounds newest first (the newest is input 1); --upper-bound 3 moves the
# window back by two rounds.
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
"$WAVG" local-sgd --data "$SAMPLES/digits/digits.csv.gz" --hidden 8 --workers 2 --period 2 --rounds 5 --batch 8 \
  -q --out-dir run
"$WAVG" merge -q --last 3 run -o last.h5
"$WAVG" merge -q run/round-0005.h5 run/round-0004.h5 run/round-0003.h5 -o named.h5
"$WAVG" merge -q --last 3 --upper-bound 3 run -o bounded.h5
"$WAVG" merge -q run/round-0003.h5 run/round-0002.h5 run/round-0001.h5 -o early.h5
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
from h5_tools import tensors
assert tensors("last.h5") == tensors("named.h5")
assert tensors("bounded.h5") == tensors("early.h5")
assert tensors("last.h5") != tensors("early.h5")
print("same tensors")
PY
