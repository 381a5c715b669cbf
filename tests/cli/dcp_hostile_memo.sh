# A DCP .metadata (tests/dcp/hostile_dcp.py memo) listing one chunk object 2,000,000 times through the pickle's memo
# (2 bytes a repeat, 4 MB): refused before any chunk is built, within 512 MiB and 20 s, where 6 MB of such
# metadata reached 1.24 GB and 17.7 s before its overlap was found.
/usr/bin/python3 "$ROOT"/tests/dcp/hostile_dcp.py memo memo 2000000
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 512 20 "$WAVG" inspect memo
