# --version prints the version, then the commit it was built from and one `name: value` line per build feature
# and the libraries. Built from a git checkout (this suite's source tree is one when $ROOT/.git exists), the commit
# is a hash git knows, with -dirty for uncommitted changes.
"$WAVG" --version > out.txt
head -1 out.txt
cut -d: -f1 out.txt | tail -n +2
commit=$(sed -n 's/^commit: //p' out.txt)
if [ -e "$ROOT/.git" ] && command -v git > /dev/null; then
  git -C "$ROOT" cat-file -e "${commit%-dirty}^{commit}"
else
  [ "$commit" = "unknown (not built from a git checkout)" ]
fi
grep -qE '^cuda: (yes \(CUDA [0-9.]+, architectures .+\)|no \(built without CUDA\))$' out.txt
grep -qE '^libraries: HDF5 [0-9]+\.[0-9]+\.[0-9]+, libzip [0-9.]+, OpenSSL [0-9.]+' out.txt
# The simd line names what this CPU runs (the kernels' run-time choice), read here from /proc/cpuinfo.
if [ "$(uname -m)" = x86_64 ] && [ -r /proc/cpuinfo ]; then
  want=sse2
  grep -qw avx2 /proc/cpuinfo && want=avx2
  grep -qw avx512f /proc/cpuinfo && want=avx512f
  grep -qE "^simd: $want \(chosen at run time" out.txt
fi
