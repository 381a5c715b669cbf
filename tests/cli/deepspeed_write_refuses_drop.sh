# A DeepSpeed folder output is input 1's files with every tensor rewritten; ZeRO's flat partitions cannot leave a
# tensor out (here the moments, --optimizer-state drop), so it is refused (exit 2) and nothing is written.
E="$SAMPLES"/deepspeed/engine/zero2
"$WAVG" merge -q "$E"/global_step1 "$E"/global_step2 --optimizer-state drop -o avg/
