# The fuzz targets, one per reader: tests/fuzz/NAME.cpp builds fuzz_NAME (tests/fuzz/CMakeLists.txt) and the suite
# runs it briefly as the test fuzz.NAME (tests/CMakeLists.txt).
set(WAVG_FUZZ_TARGETS
  hdf5_native hdf5_diff keras safetensors pytorch tf_index dcp deepspeed flax npz orbax caffe mxnet tfjs json recipe onnx gguf)
# How many mutants the suite's fuzz.NAME runs after its seeds and regression inputs (replay.cpp's -runs, seed 1): a
# fixed number, so that a run finds the same on any machine at any load (a time limit made the count, and so the
# findings, depend on the machine's speed). Each is about a quarter of a second of one core (measured on the 2-core
# VM of tests/bench/README.md, 2026-12-07: the rate in CPU time of a 3 s run); all together about 5 s, as before.
set(WAVG_FUZZ_RUNS
  hdf5_native 40000  hdf5_diff 250  keras 20  safetensors 2000  pytorch 2000  tf_index 1500  dcp 250  deepspeed 150
  flax 2500  npz 2000  orbax 60  caffe 2000  mxnet 2000  tfjs 1200  json 2000  recipe 2000  onnx 2000  gguf 1800)
