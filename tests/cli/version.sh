# --version prints the version, then one `name: value` line per build feature and the libraries.
"$WAVG" --version > out.txt
head -1 out.txt
cut -d: -f1 out.txt | tail -n +2
grep -qE '^cuda: (yes \(CUDA [0-9.]+, architectures .+\)|no \(built without CUDA\))$' out.txt
grep -qE '^libraries: HDF5 [0-9]+\.[0-9]+\.[0-9]+, libzip [0-9.]+, OpenSSL [0-9.]+' out.txt
# The simd line names what this CPU runs (the kernels' run-time choice), read here from /proc/cpuinfo.
if [ "$(uname -m)" = x86_64 ] && [ -r /proc/cpuinfo ]; then
  want=sse2
  grep -qw avx2 /proc/cpuinfo && want=avx2
  grep -qw avx512f /proc/cpuinfo && want=avx512f
  grep -qE "^simd: $want \(chosen at run time" out.txt
fi
