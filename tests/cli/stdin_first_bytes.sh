# Standard input is checked by its first bytes before the rest is copied into $TMPDIR (issue 26): an endless
# stream that is no checkpoint is refused once its first MiB has come, naming what it looked like, so the
# writer's pipe breaks after a few MiB (before, all 200 MiB were copied first), and $TMPDIR is left empty.
mkdir tmp
/usr/bin/python3 -c '
import os, sys
sent = 0
try:
    while sent < 200 << 20:
        sent += os.write(1, b"\x01" * (1 << 16))
except BrokenPipeError:
    pass
open("sent", "w").write(str(sent))
' | TMPDIR=$PWD/tmp "$WAVG" inspect - || echo "exit $?"
/usr/bin/python3 -c 'sent = int(open("sent").read()); print("pipe broken early" if sent < 16 << 20 else sent)'
ls -A tmp
