# A DCP folder (tests/dcp/hostile_dcp.py shared) whose 1,000 one-row chunks of one tensor all name the one archive
# (747 bytes) for their storage: refused, naming two chunks, exit 1, no output, as TensorFlow entries sharing bytes
# are; read, the folder would merge into a tensor 1,000 times the bytes it holds.
/usr/bin/python3 "$ROOT"/tests/dcp/hostile_dcp.py shared shared 1000
"$WAVG" merge -q shared shared -o out.safetensors || echo "exit $?"
ls out.safetensors 2>/dev/null || echo "no output left"
