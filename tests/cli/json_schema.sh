# formats/json/schema.json against the documents wavg writes and against broken ones, with the jsonschema package
# (Debian python3-jsonschema, draft 2020-12): wavg JSON output in both encodings validates; documents that break
# the spec's shape (unknown dtype, negative dimension, missing data, wrong format tag, non-string metadata) do not.
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || { echo "no jsonschema"; exit 77; }
"$WAVG" merge -q "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o dec.json || exit 1
"$WAVG" convert -q "$SAMPLES/dtypes/a.h5" --format json-base64 -o b64.json || exit 1
"$WAVG" convert -q "$SAMPLES/dtypes/a.h5" -o dtypes.json || exit 1
/usr/bin/python3 - "$ROOT/formats/json/schema.json" <<'PY'
import copy, json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
v = jsonschema.Draft202012Validator(schema)
jsonschema.Draft202012Validator.check_schema(schema)
for name in ("dec.json", "b64.json", "dtypes.json"):
    errors = list(v.iter_errors(json.load(open(name))))
    assert not errors, (name, errors[0].message)
doc = json.load(open("dtypes.json"))
def broken(change):
    d = copy.deepcopy(doc)
    change(d)
    return not v.is_valid(d)
assert broken(lambda d: d["tensors"][0].update(dtype="complex64"))
assert broken(lambda d: d["tensors"][0].update(shape=[-1]))
assert broken(lambda d: d["tensors"][0].pop("data"))
assert broken(lambda d: d.update(format="wavg"))
assert broken(lambda d: d.update(metadata={"k": 1}))
print("wavg JSON output validates against schema.json; 5 broken documents do not")
PY
