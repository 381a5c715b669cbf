# check takes merge's --lora: clients whose A matrices differ cannot be merged by frozen-a, and check names the
# first module (exit 3), as merge does; the same clients check out with the exact aggregation (the one input the
# plan sees is their aggregate).
cd "$SAMPLES/lora"
"$WAVG" check client1 client2 --lora frozen-a || echo "exit $?"
"$WAVG" check client1 client2 --lora exact
