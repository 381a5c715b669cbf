# A ZeRO checkpoint missing a rank's optimizer file is refused: partition_count says how many there must be.
cp -r "$SAMPLES"/deepspeed/run/global_step1000 step
rm step/zero_pp_rank_1_mp_rank_00_optim_states.pt
"$WAVG" merge -q step "$SAMPLES"/deepspeed/run/global_step2000 -o avg.safetensors
