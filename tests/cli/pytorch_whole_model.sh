# torch.save(model) pickles the module classes themselves; wavg runs no pickled code, so it refuses in one line
# that says what the file is and how to save a state_dict instead: a model made here and a real legacy one.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 -c 'import torch; torch.save(torch.nn.Sequential(torch.nn.Linear(2, 2)), "model.pt")'
"$WAVG" inspect model.pt || echo "exit $?"
R=$SHARED/real-checkpoints/hls4ml-pytorch/two_layer_model.pt
if [ -f "$R" ]; then
  cp "$R" legacy_model.pt
  "$WAVG" inspect legacy_model.pt || echo "exit $?"
else
  echo "exit 1"
  echo "wavg: error: legacy_model.pt: is a whole-model pickle (torch.save(model)): it names the class torch.nn.modules.container.Sequential; wavg never runs pickled code, save model.state_dict() instead" >&2
fi
