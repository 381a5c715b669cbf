# A DeepSpeed folder whose `latest` names a tag that is a symbolic link to a folder outside it is refused, as a
# link in a Hugging Face or TF.js folder is (issue 39, item 17): wavg follows no link out of a model folder, and
# one rule (link_out_of_folder) says so for every folder format. A `latest` that is itself a link is refused too,
# and so is a rank file that is a link to a file outside.
mkdir run elsewhere
cp -r "$SAMPLES/deepspeed/run/global_step3000" elsewhere/
ln -s ../elsewhere/global_step3000 run/global_step3000
cp "$SAMPLES/deepspeed/run/latest" run/
code=0
"$WAVG" merge -q run run -o avg.safetensors 2>&1 || code=$?
echo "linked tag: exit $code"
rm run/global_step3000 run/latest
cp -r elsewhere/global_step3000 run/
cp "$SAMPLES/deepspeed/run/latest" elsewhere/latest
ln -s ../elsewhere/latest run/latest
code=0
"$WAVG" merge -q run run -o avg.safetensors 2>&1 || code=$?
echo "linked latest: exit $code"
rm run/latest
cp "$SAMPLES/deepspeed/run/latest" run/
mv run/global_step3000/zero_pp_rank_1_mp_rank_00_optim_states.pt elsewhere/
ln -s ../../elsewhere/zero_pp_rank_1_mp_rank_00_optim_states.pt run/global_step3000/
code=0
"$WAVG" merge -q run run -o avg.safetensors 2>&1 || code=$?
echo "linked rank file: exit $code"
ls -A
