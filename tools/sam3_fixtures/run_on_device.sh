#!/usr/bin/env bash
# The SAM 3 parity fixtures in one device call (GPU machine), from the repository root, carry [".ref/sam3_src"]
# (made by stage_meta_sam3.sh): the tiny image fixture and the tiny video fixture on the CPU (fp32, no TF32 or
# autocast questions; a few seconds each), the release-shapes image fixture on CUDA (CPU when none).
#
# Everything comes back in at most 4 files under $OUT (the device tool returns at most 8, each under 16 MiB):
#   $OUT/sam3-tiny.tgz                  tiny/ (image), video/ (video), and their logs
#   $OUT/sam3-release.tgz.part-aa, -ab  release/ and its log, split in parts of 15 MiB
# Unpack (on this machine, from the repository root; FILES = the device tool's files_at folder):
#   tar xzf FILES/sam3-tiny.tgz -C /tmp && cp -r /tmp/sam3/tiny/. gpu/src/test/resources/fixtures/sam3/tiny/ \
#       && cp -r /tmp/sam3/video gpu/src/test/resources/fixtures/sam3/      # both committed (~2 MB)
#   cat FILES/sam3-release.tgz.part-* | tar xz -C /tmp                     # /tmp/sam3/release, not committed
#   tools/sam3_fixtures/run_release_parity.sh /tmp/sam3/release
set -euo pipefail
final=${OUT:-/tmp/sam3-fixtures-out}
work=$(mktemp -d)
out=$work/sam3
mkdir -p "$out" "$final"
export PYTHONPATH=$PWD/.ref/sam3_src
status=0
python3 -c "import torch, torchvision, timm, regex; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" \
    > "$out/versions.log" 2>&1 || status=1
cat "$out/versions.log"
python3 tools/sam3_fixtures/make_sam3_fixtures.py --sam3 .ref/sam3_src --config tiny --out "$out/tiny" --device cpu \
    > "$out/tiny.log" 2>&1 || status=1
tail -3 "$out/tiny.log"
python3 tools/sam3_fixtures/make_sam3_video_fixtures.py --sam3 .ref/sam3_src --out "$out/video" --device cpu \
    > "$out/video.log" 2>&1 || status=1
tail -5 "$out/video.log"
python3 tools/sam3_fixtures/make_sam3_fixtures.py --sam3 .ref/sam3_src --config release --out "$out/release" \
    > "$out/release.log" 2>&1 || status=1
tail -3 "$out/release.log"
# pack what exists (a failed script leaves its log, which says why)
small=$(cd "$work" && ls -d sam3/tiny sam3/video sam3/versions.log sam3/tiny.log sam3/video.log 2>/dev/null || true)
tar czf "$final/sam3-tiny.tgz" -C "$work" $small
large=$(cd "$work" && ls -d sam3/release sam3/release.log 2>/dev/null || true)
tar czf - -C "$work" $large | split -b 15M - "$final/sam3-release.tgz.part-"
rm -rf "$work"
ls -la "$final"
exit $status
