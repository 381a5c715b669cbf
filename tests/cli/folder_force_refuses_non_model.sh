# --force replaces a model folder's model, never a folder of other things: a DCP or DeepSpeed folder output over an
# existing folder that holds no checkpoint of that kind (a folder of notes, one holding a .metadata folder or a
# link named like a model states file) is refused by name, exit 2, and the folder is left byte for byte; an empty
# folder is filled.
D="$SAMPLES"/dcp/run
S="$SAMPLES"/deepspeed/run
mkdir -p notes/sub empty
echo "my notes" >notes/notes.txt
echo "x" >notes/sub/f
"$WAVG" merge -q "$D"/step-100 "$D"/step-200 -o notes --force || echo "exit $?"
"$WAVG" merge -q "$S"/global_step1000 "$S"/global_step2000 -o notes/ --force || echo "exit $?"
mkdir notes/.metadata
ln -s notes.txt notes/mp_rank_00_model_states.pt
"$WAVG" merge -q "$D"/step-100 "$D"/step-200 -o notes --force || echo "exit $?"
"$WAVG" merge -q "$S"/global_step1000 "$S"/global_step2000 -o notes --force || echo "exit $?"
find notes | sort
cat notes/notes.txt
"$WAVG" merge -q "$D"/step-100 "$D"/step-200 -o empty --force
ls -A empty
