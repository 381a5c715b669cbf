#!/bin/sh
# The federated samples made with wavg itself: each client is a copy of a samples/mlp replica with the metadata
# a federated merge reads, set by `wavg convert --set-meta` (HDF5 root attributes). make_federated.py writes the
# same files with h5py. Run from the repository root: sh samples/federated/make_federated.sh
set -e
out=samples/federated
mkdir -p $out/round-1 $out/round-2
wavg convert samples/mlp/node1.h5 -o $out/global.h5 --set-meta round=0 --force -q
# round, client, replica, num_examples, and the round of the global model the client started from
for c in 1:1:node1:600:0 1:2:node2:200:0 1:3:node3:400:0 2:1:node2:500:1 2:2:node3:300:1 2:3:node1:100:1; do
  IFS=: read -r r k node n from <<EOT
$c
EOT
  wavg convert samples/mlp/$node.h5 -o $out/round-$r/client-$k.h5 --set-meta num_examples=$n --set-meta round=$from --force -q
done
