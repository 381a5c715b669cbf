# A corrupt safetensors file is one line on stderr and exit 1: here a header that claims more bytes than the file.
printf '\xe8\x03\x00\x00\x00\x00\x00\x00{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}' > lies.safetensors
"$WAVG" inspect lies.safetensors
