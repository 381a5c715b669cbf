# A DeepSpeed folder output (-o avg/ after DeepSpeed inputs) over the last two checkpoints of runs DeepSpeed's
# engine wrote (samples/deepspeed/engine: ZeRO 2 in bf16 and ZeRO 3, two ranks, Adam): input 1's files and
# partitioning, every rank's fp32 master partition and Adam moments the float64 mean of the inputs', the module's
# bf16 copy of each parameter the averaged master rounded, Adam's step and global_steps the newest input's (torch
# reads the output: tests/deepspeed/check_writer.py).
E="$SAMPLES"/deepspeed/engine
"$WAVG" merge -q --last 2 "$E"/zero2 -o zero2/
"$WAVG" merge -q --last 2 "$E"/zero3 -o zero3/
/usr/bin/python3 "$ROOT"/tests/deepspeed/check_writer.py "$E"/zero2/global_step2 "$E"/zero2/global_step1 zero2 \
  "$E"/zero3/global_step2 "$E"/zero3/global_step1 zero3
