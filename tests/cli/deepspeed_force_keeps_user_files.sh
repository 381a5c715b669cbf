# --force over a DeepSpeed folder output replaces only the checkpoint's rank files (removal.hpp): the folder also
# holds a user's notes, a .git/ folder, a second checkpoint in old/ and a symbolic link named like a rank file
# (zero_pp_rank_7_mp_rank_00_optim_states.pt -> notes.txt), and each stays byte for byte; the link is not a rank
# file of the folder, so it stays a link. The new checkpoint is checked by tests/deepspeed/check_writer.py (torch),
# which looks at the folder's *.pt files alone.
E="$SAMPLES"/deepspeed/engine
"$WAVG" merge -q --last 2 "$E"/zero2 -o zero2/
mkdir zero2/.git zero2/old
echo "ref: refs/heads/main" >zero2/.git/HEAD
echo "my notes" >zero2/notes.txt
cp zero2/*_model_states.pt zero2/old/
ln -s notes.txt zero2/zero_pp_rank_7_mp_rank_00_optim_states.pt
(cd zero2 && sha256sum .git/HEAD notes.txt old/*) >before
"$WAVG" merge -q --last 2 "$E"/zero2 -o zero2/ --force
(cd zero2 && sha256sum --quiet -c ../before) && echo "the user's files and old/ are byte for byte as before"
echo "the link: $(readlink zero2/zero_pp_rank_7_mp_rank_00_optim_states.pt)"
rm -r zero2/zero_pp_rank_7_mp_rank_00_optim_states.pt zero2/.git zero2/old zero2/notes.txt  # the checker's own view
/usr/bin/python3 "$ROOT"/tests/deepspeed/check_writer.py "$E"/zero2/global_step2 "$E"/zero2/global_step1 zero2
