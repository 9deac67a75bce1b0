#!/usr/bin/env bash
# The SAM 3 parity fixtures in one device call (GPU machine), from the repository root, carry [".ref/sam3_src"]
# (made by stage_meta_sam3.sh). Writes the tiny fixture (to commit: copy $OUT/sam3/tiny over
# gpu/src/test/resources/fixtures/sam3/tiny) and the release-shapes one ($OUT/sam3/release, ~30 MB, not
# committed: point -Dsamstream.fixtures.sam3Release=DIR at it). About 2-4 minutes, most of it imports and the
# release weights (848M values from the integer formula).
set -euo pipefail
out=${OUT:-/tmp/sam3-fixtures-out}/sam3
mkdir -p "$out"
export PYTHONPATH=$PWD/.ref/sam3_src
python3 -c "import torch, torchvision, timm, regex; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
python3 tools/sam3_fixtures/make_sam3_fixtures.py --sam3 .ref/sam3_src --config tiny --out "$out/tiny" --device cpu \
    2>&1 | tee "$out/tiny.log"
python3 tools/sam3_fixtures/make_sam3_fixtures.py --sam3 .ref/sam3_src --config release --out "$out/release" \
    2>&1 | tee "$out/release.log"
ls -la "$out/tiny" "$out/release"
