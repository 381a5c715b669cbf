#!/usr/bin/env python3
"""Writes the TF1 V1 checkpoints in this folder with TensorFlow itself (run once; the files are committed):

  v1_a/model.ckpt, v1_b/model.ckpt     a TF1 graph saved by tf.compat.v1.train.Saver(write_version=V1), the
                                       single-file format of the 2016 TF-Slim releases: dense/kernel [3, 2] and
                                       dense/bias [2] (float32) and extra/double (float64) from seeds 1 and 2, and
                                       global_step (int64) 3 and 6 (SaveSlices writes no bfloat16, and
                                       TensorFlow's V1 reader reads no float16 back, so neither is here)
  v1_values.json                       every variable as TensorFlow's own reader (NewCheckpointReader) gives it:
                                       {file: {name: [dtype, shape, values as float64]}}, for the tests

Made with tensorflow-cpu 2.21.0 (python3 make_v1.py in a venv with it).
"""
import json
import os

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()
values = {}
for seed, folder in ((1, "v1_a"), (2, "v1_b")):
    os.makedirs(folder, exist_ok=True)
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(seed)
        v1 = tf.compat.v1
        v1.get_variable("dense/kernel", [3, 2])
        v1.get_variable("dense/bias", [2], initializer=v1.random_normal_initializer(seed=seed))
        v1.get_variable("extra/double", [2, 2], dtype=tf.float64)
        step = v1.train.get_or_create_global_step()
        saver = v1.train.Saver(write_version=v1.train.SaverDef.V1)
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            s.run(step.assign(3 * seed))
            path = saver.save(s, f"{folder}/model.ckpt", write_meta_graph=False, write_state=False)
    r = v1.train.NewCheckpointReader(path)
    types = r.get_variable_to_dtype_map()
    values[path] = {n: [types[n].name, list(shape), np.asarray(r.get_tensor(n), np.float64).ravel().tolist()]
                    for n, shape in sorted(r.get_variable_to_shape_map().items())}
with open("v1_values.json", "w") as f:
    json.dump(values, f, indent=1, sort_keys=True)
    f.write("\n")
