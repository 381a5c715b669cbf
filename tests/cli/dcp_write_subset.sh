# A DCP folder output that leaves tensors of input 1 out gets rank files of input 1's names holding only the kept
# chunks (and input 1's torch.save'd values), and a fresh .metadata describing exactly them. tests/dcp/check_subset.py
# checks each without torch or wavg (numpy, zipfile, pickle with stubs): the kept tensors only, input 1's chunks,
# each equal to the closed forms' mean (samples/dcp), every rank file exactly the storages the .metadata names.
# --exclude on the two-rank input 1 (fc1.weight's row-wise chunks leave both ranks' files), --optimizer-state drop,
# --include keeping only tensors of rank 1 (rank 0's file is not written), --tensors intersection.
R="$SAMPLES"/dcp/run
check() { /usr/bin/python3 "$ROOT"/tests/dcp/check_subset.py "$@"; }
"$WAVG" merge -q "$R"/step-300 "$R"/step-100 "$R"/step-200 -o ex/ --exclude 'model.fc1.*'
check ex "$R"/step-300 2 300 model.{scale,fc2.weight,fc2.bias} optim.state.{0,1,2,3}.{step,exp_avg,exp_avg_sq}
"$WAVG" merge -q "$R"/step-100 "$R"/step-200 -o drop/ --optimizer-state drop
check drop "$R"/step-100 1.5 100 model.{scale,fc1.weight,fc1.bias,fc2.weight,fc2.bias} optim.state.{0,1,2,3}.step
"$WAVG" merge -q "$R"/step-300 "$R"/step-100 -o inc/ --include 'model.*.bias'
check inc "$R"/step-300 2 300 model.fc1.bias model.fc2.bias
cp -r "$R"/step-200 s200
/usr/bin/python3 "$ROOT"/tests/dcp/dcp_edit.py s200 drop
"$WAVG" merge -q "$R"/step-100 s200 -o inter/ --tensors intersection
check inter "$R"/step-100 1.5 100 model.{scale,fc1.weight,fc1.bias,fc2.weight} \
  optim.state.{0,1,2,3}.{step,exp_avg,exp_avg_sq}
