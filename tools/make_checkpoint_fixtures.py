"""Writes the real-PyTorch checkpoint fixtures of gpu/src/test/resources/fixtures/checkpoint/.

Run where PyTorch and transformers are installed (made with torch 2.11.0, transformers 5.17.0):
    python3 tools/make_checkpoint_fixtures.py gpu/src/test/resources/fixtures/checkpoint

Files:
  hf.bin          torch.save(SamModel.state_dict()) of a tiny transformers SamModel (random weights);
                  both tied positional-embedding keys share one storage
  hf.safetensors  the same model's save_pretrained() weights (one copy of the tied buffer)
  expected.json   per key of hf.bin: [shape, sum as float64, first value]
  views.pth       fp16 / bf16 / fp64 tensors and two strided views of one storage, pickle protocol 4
  legacy.pth      the pre-1.6 (non-zip) format, which samstream refuses with a hint
  evil.pth        a pickle that would call os.system on load, which samstream refuses
The tiny model matches RandomSamWeights.tinyConfig() in the Java tests.
"""
import json
import os
import shutil
import sys

import torch
from transformers import SamConfig, SamModel


class CallsSystem:
    def __reduce__(self):
        return os.system, ("true",)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    config = SamConfig(
        vision_config=dict(hidden_size=32, output_channels=32, num_hidden_layers=4, num_attention_heads=2,
                           mlp_dim=64, image_size=64, patch_size=8, window_size=4, global_attn_indexes=[1, 3],
                           num_pos_feats=16),
        prompt_encoder_config=dict(hidden_size=32, image_size=64, patch_size=8, mask_input_channels=8),
        mask_decoder_config=dict(hidden_size=32, mlp_dim=64, num_hidden_layers=2, num_attention_heads=8,
                                 iou_head_hidden_dim=32))
    model = SamModel(config).eval()
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            t.normal_()
    state = model.state_dict()
    torch.save(state, os.path.join(out, "hf.bin"))
    tmp = os.path.join(out, "pretrained")
    model.save_pretrained(tmp)
    os.replace(os.path.join(tmp, "model.safetensors"), os.path.join(out, "hf.safetensors"))
    shutil.rmtree(tmp)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({k: [list(v.shape), v.double().sum().item(), v.flatten()[0].item()] for k, v in state.items()},
                  f, indent=0)

    x = torch.arange(6.0) / 4 - 0.5
    y = torch.arange(12.0).reshape(3, 4)
    views = {"h": x.half(), "b": x.bfloat16(), "t": y.t(), "s": y[1:, ::2], "d": x.double()}
    torch.save(views, os.path.join(out, "views.pth"), pickle_protocol=4)
    torch.save({"w": x}, os.path.join(out, "legacy.pth"), _use_new_zipfile_serialization=False)
    torch.save({"w": x, "e": CallsSystem()}, os.path.join(out, "evil.pth"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
