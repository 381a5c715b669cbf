# A file of no kind wavg reads is refused by content, whatever its extension.
printf 'hello world, not weights' > notes.safetensors
"$WAVG" inspect notes.safetensors
