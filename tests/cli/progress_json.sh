# --progress json: one JSON object a line on stderr (not a terminal here), the terminal line's numbers: the job, its
# pass, the percentage and bytes of all inputs read (here three times the sample's tensor bytes, h5py's count).
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
"$WAVG" merge "$SAMPLES"/mlp/node[123].h5 -o out.h5 --progress json 2>progress.txt
"$WAVG" merge "$SAMPLES"/mlp/node[123].h5 -o quiet.h5 -f 2>quiet.txt
/usr/bin/python3 - "$SAMPLES/mlp/node1.h5" <<'PY'
import h5py, json, sys
lines = [json.loads(l) for l in open("progress.txt")]
keys = ["job", "pass", "percent", "bytes_done", "bytes_total", "bytes_per_second", "seconds_left"]
print(all(list(l) == keys for l in lines), lines[0]["job"], lines[-1]["percent"])
sizes = []
def add(name, o):
    if isinstance(o, h5py.Dataset):
        sizes.append(o.nbytes)
h5py.File(sys.argv[1], "r").visititems(add)
print("bytes_total is 3 x the tensor bytes:", {l["bytes_total"] for l in lines} == {3 * sum(sizes)})
print("percent never falls within a pass:", all(a["percent"] <= b["percent"] for a, b in zip(lines, lines[1:])
                                                 if a["pass"] == b["pass"]))
print("without --progress, stderr is empty:", open("quiet.txt").read() == "")
PY
