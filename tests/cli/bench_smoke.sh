# The benchmark runs end to end on a tiny model, and wavg's output there equals numpy's float64 mean bit for bit.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time missing"; exit 77; }
/usr/bin/python3 "$ROOT/tests/bench/bench.py" --quick --check --dir "$PWD/data" --wavg "$WAVG" >table.txt
grep -q '^| wavg merge HDF5 -j1 ' table.txt
grep -q '^| floor: cat inputs + write output ' table.txt
