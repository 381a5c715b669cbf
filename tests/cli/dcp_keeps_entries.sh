# A DCP folder output keeps input 1's non-tensor values (Adam's param_groups: lr, betas, ...): its .metadata is
# input 1's, byte for byte, so merge must not warn that they are left out (the registry row says it keeps them).
R="$SAMPLES"/dcp/run
"$WAVG" merge "$R"/step-100 "$R"/step-200 -o out/ >/dev/null
cmp out/.metadata "$R"/step-100/.metadata && echo "same .metadata"
