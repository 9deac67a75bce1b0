#!/usr/bin/env bash
# Trains the demo SAM 3 in one device call (GPU machine; ~8 minutes: 6.3 of training, the rest start-up and the
# held-out evaluation), from the repository root, carry [".ref/sam3_src"] (Meta's sam3 + ftfy, staged by
# tools/sam3_fixtures/stage_meta_sam3.sh). Extra arguments go to the training script (e.g. --minutes 5).
#
# Writes 3 files into $OUT (the device tool returns at most 8, each under 16 MiB):
#   sam3-demo-synthetic.pt  the checkpoint (fp16, {"model": ...} with "detector." / "tracker." keys, ~7.3 MB)
#   train_log.txt           the run's log (versions, losses every 25 steps, evaluation)
#   summary.json            configuration, steps, losses, the held-out evaluation
# The checkpoint is written before the evaluation, so it comes back even if the evaluation overruns; `timeout`
# stops the script at 530 s (the call must stay under 9 minutes) so whatever is in $OUT still returns.
set -euo pipefail
final=${OUT:-/tmp/sam3-demo-out}
mkdir -p "$final"
export PYTHONPATH=$PWD/.ref/sam3_src
python3 -c "import torch, torchvision, timm, scipy; print('torch', torch.__version__, 'torchvision', \
torchvision.__version__, 'timm', timm.__version__, 'scipy', scipy.__version__, \
'cuda', torch.cuda.is_available())" || true
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
status=0
timeout 530 python3 tools/sam3_demo_model/train_sam3_demo_model.py --sam3 .ref/sam3_src --minutes 6.3 \
    --out "$final" "$@" > "$final/stdout.txt" 2>&1 || status=$?
# train_log.txt has what the script logged; keep stdout only when it says more (a traceback)
if [ "$status" -ne 0 ]; then tail -40 "$final/stdout.txt"; else rm -f "$final/stdout.txt"; fi
tail -8 "$final/train_log.txt" 2>/dev/null || true
ls -la "$final"
exit $status
