#!/usr/bin/env bash
# Stages what make_sam3_fixtures.py needs on the GPU machine into the git-ignored folder .ref/sam3_src
# (.ref/ is in .gitignore): Meta's sam3 package (from a checkout or a bare mirror of
# github.com/facebookresearch/sam3, never committed) and the pure-Python ftfy + wcwidth the tokenizer imports
# (the GPU machine has torch, torchvision, timm, regex, numpy, PIL; no ftfy, no internet).
#
#   tools/sam3_fixtures/stage_meta_sam3.sh /work/.mirror/facebookresearch+sam3/repo
#
# Then one device call (run from the repository root), carry [".ref/sam3_src"]:
#   bash tools/sam3_fixtures/run_on_device.sh
set -euo pipefail
src=${1:?usage: stage_meta_sam3.sh <sam3 checkout or bare git dir>}
dest=.ref/sam3_src
rm -rf "$dest" && mkdir -p "$dest"
if [ -d "$src/sam3/model" ]; then
    cp -r "$src/sam3" "$dest/"
else
    # a bare mirror: the package at HEAD, without the repository's large assets and notebooks
    git --git-dir="$src" archive HEAD sam3 | tar -x -C "$dest"
fi
rm -rf "$dest/sam3/agent" "$dest/sam3/eval" "$dest/sam3/perflib/tests"
# ftfy and wcwidth from the local package index (pure Python; wcwidth's C helper is optional)
python3 -m pip install --quiet --no-deps --target "$dest" ftfy wcwidth
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$dest"
ls "$dest"
