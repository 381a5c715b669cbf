# The fuzz targets, one per reader: tests/fuzz/NAME.cpp builds fuzz_NAME (tests/fuzz/CMakeLists.txt) and the suite
# runs it briefly as the test fuzz.NAME (tests/CMakeLists.txt).
set(WAVG_FUZZ_TARGETS
  hdf5_native hdf5_diff keras safetensors pytorch tf_index dcp deepspeed flax npz orbax caffe mxnet tfjs json recipe onnx gguf)
