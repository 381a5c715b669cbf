# A Keras 3 .weights.h5 alone does not say whether optimizer/vars/1 is the learning rate (a number in
# compile_config) or a schedule's first slot: the reader judges by the variable count, and that is a last-resort
# rule, so inspect marks it "(by name)" and merge -v lists it. Inside the .keras archive (same file, Keras
# 3.15.1's, samples/roles) config.json settles it and neither says so.
for x in a b; do
  /usr/bin/python3 -c "import sys, zipfile
open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1]).read('model.weights.h5'))" "$SAMPLES/roles/$x.keras" \
    "$x.weights.h5"
done
"$WAVG" inspect a.weights.h5 | grep "^optimizer/vars/1 " | sed "s/^/weights.h5: /"
"$WAVG" inspect "$SAMPLES/roles/a.keras" | grep "^optimizer/vars/1 " | sed "s/^/.keras: /"
"$WAVG" merge a.weights.h5 b.weights.h5 -o m.weights.h5 -v 2>&1 | grep "^wavg: role by name"
"$WAVG" merge "$SAMPLES/roles/a.keras" "$SAMPLES/roles/b.keras" -o m.keras -v 2>&1 | grep -c "^wavg: role by name" ||
  true
