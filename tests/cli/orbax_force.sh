# An Orbax output folder is replaced only with --force, and only by what wavg writes: a file of the user's beside it
# stays; a folder that holds no Orbax checkpoint is refused even with --force.
O=$ROOT/tests/orbax
"$WAVG" merge -q "$O"/train_1 "$O"/train_2 -o out/
echo "mine" > out/notes.txt
"$WAVG" merge -q "$O"/train_1 "$O"/train_3 -o out/ 2>&1 || echo "exit $?"
"$WAVG" merge -q --force "$O"/train_1 "$O"/train_3 -o out/ && ls out
mkdir other && echo "x" > other/a.txt
"$WAVG" merge -q --force "$O"/train_1 "$O"/train_3 -o other/ --format orbax 2>&1 || echo "exit $?"
