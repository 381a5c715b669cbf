# Files of kinds wavg does not read are named in the message, not mistaken for a broken Keras archive nor shown as bytes
# (PyTorch's torch.save files, which it once named here, are read by formats/pytorch now): a plain pickle, a Keras
# architecture (model.to_json()) and a sharded-checkpoint index of a kind wavg does not read (TensorFlow .h5 shards;
# safetensors and .bin indexes are read: hf_folder_*).
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, pickle, torch
sd = {"w": torch.ones(2)}
torch.save(sd, "model.pt")
torch.save(sd, "legacy.pt", _use_new_zipfile_serialization=False)
pickle.dump({"w": [1.0, 2.0]}, open("weights.pkl", "wb"), protocol=4)
json.dump({"class_name": "Sequential", "config": {"name": "s", "layers": []}, "keras_version": "2.15.0",
           "backend": "tensorflow"}, open("arch.json", "w"))
json.dump({"metadata": {"total_size": 16}, "weight_map": {"a": "tf_model-00001-of-00002.h5",
           "b": "tf_model-00002-of-00002.h5"}}, open("tf_model.h5.index.json", "w"))
PY
for f in weights.pkl arch.json tf_model.h5.index.json; do
  set +e
  "$WAVG" inspect "$f"
  echo "exit $?"
  set -e
done
