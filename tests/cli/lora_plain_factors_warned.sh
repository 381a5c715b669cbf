# adapter_model.safetensors files given directly are plain tensors and average as such (FedIT's factor-wise mean),
# but wavg says that this is not the mean of the adapters' updates, pointing to the adapter folders.
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/client2" .
"$WAVG" merge client1/adapter_model.safetensors client2/adapter_model.safetensors -o plain.safetensors
