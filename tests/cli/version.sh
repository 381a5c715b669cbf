# --version prints the version, then one `name: value` line per build feature and the libraries.
"$WAVG" --version > out.txt
head -1 out.txt
cut -d: -f1 out.txt | tail -n +2
grep -qE '^cuda: (yes \(CUDA [0-9.]+, architectures .+\)|no \(built without CUDA\))$' out.txt
grep -qE '^libraries: HDF5 [0-9]+\.[0-9]+\.[0-9]+, libzip [0-9.]+, OpenSSL [0-9.]+' out.txt
