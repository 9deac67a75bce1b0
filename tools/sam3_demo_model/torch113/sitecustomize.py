"""What Meta's sam3 needs of torch 2 and torchvision 0.15+, for a CPU smoke run on Debian 12's python3-torch 1.13
(apt install python3-torch python3-torchvision python3-scipy python3-regex; no pip or GPU needed):

  PYTHONPATH=tools/sam3_demo_model/torch113 /usr/bin/python3 tools/sam3_demo_model/train_sam3_demo_model.py \
      --sam3 .ref/sam3_src --out /tmp/sam3demo --smoke

Python imports this module at start-up when its folder is on PYTHONPATH; the timm package beside it stands in for
timm's DropPath, Mlp and trunc_normal_. Each stand-in is defined only where torch lacks the real one: scaled dot
product attention in plain ops, torch.nn.attention's context manager as a no-op, torch.compiler as "not compiling",
torchvision.transforms.v2 as names that refuse to be called (the model code imports them; training never calls
them). Not for the GPU machine (its torch is whole) and not for measuring anything.
"""
import contextlib
import enum
import math
import sys
import types

import torch
import torch.nn.functional as F

if not hasattr(F, "scaled_dot_product_attention"):
    def _sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        s = (q @ k.transpose(-2, -1)) * (scale or 1.0 / math.sqrt(q.shape[-1]))
        if is_causal:
            s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        if attn_mask is not None:
            s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
        return F.dropout(s.softmax(-1), dropout_p) @ v

    F.scaled_dot_product_attention = _sdpa

try:
    import torch.nn.attention  # noqa: F401
except ImportError:
    _att = types.ModuleType("torch.nn.attention")
    _att.sdpa_kernel = lambda *a, **k: contextlib.nullcontext()
    _att.SDPBackend = enum.Enum("SDPBackend", "MATH FLASH_ATTENTION EFFICIENT_ATTENTION CUDNN_ATTENTION ERROR")
    sys.modules["torch.nn.attention"] = _att
    torch.nn.attention = _att

if not hasattr(torch, "compiler"):
    torch.compiler = types.SimpleNamespace(
        is_compiling=lambda: False, is_dynamo_compiling=lambda: False, cudagraph_mark_step_begin=lambda: None,
        disable=lambda fn=None, **k: fn if fn is not None else (lambda f: f))
for _name in ("enable_mem_efficient_sdp", "enable_flash_sdp", "enable_math_sdp"):
    if not hasattr(torch.backends.cuda, _name):
        setattr(torch.backends.cuda, _name, lambda *a, **k: None)
# Meta's tracking predictor builds a CUDA bf16 autocast context in its constructor; torch 1.13 asks the (absent)
# GPU whether it supports bf16 there, where torch 2 disables the context with a warning.
if not torch.cuda.is_available():
    torch.cuda.is_bf16_supported = lambda *a, **k: True

try:
    import torchvision.transforms as _tt

    if not hasattr(_tt, "v2"):
        class _Refuses:
            def __init__(self, *a, **k):
                pass

            def __call__(self, *a, **k):
                raise RuntimeError("torchvision.transforms.v2 is a stand-in here (torch 1.13 shim)")

        _v2 = types.ModuleType("torchvision.transforms.v2")
        _fn = types.ModuleType("torchvision.transforms.v2.functional")
        _v2.__getattr__ = _fn.__getattr__ = lambda name: _Refuses
        _v2.functional = _fn
        sys.modules["torchvision.transforms.v2"] = _v2
        sys.modules["torchvision.transforms.v2.functional"] = _fn
        _tt.v2 = _v2
except ImportError:
    pass
