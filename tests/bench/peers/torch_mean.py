"""Peer: the usual PyTorch idiom. torch.load every state_dict, stack, mean, torch.save.

Usage: torch_mean.py OUT IN...
"""
import sys

import torch

out, inputs = sys.argv[1], sys.argv[2:]
sds = [torch.load(p) for p in inputs]
torch.save({k: torch.stack([sd[k] for sd in sds]).mean(0) for k in sds[0]}, out)
