# inspect names TF.js and the model kind (layers or graph); userDefinedMetadata is shown as metadata.
"$WAVG" inspect "$SAMPLES/tfjs/graph/model.json" | sed "s|$SAMPLES/||"
