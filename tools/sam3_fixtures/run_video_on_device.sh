#!/usr/bin/env bash
# The SAM 3 video fixture alone, on the GPU machine's CPU (fp32), from the repository root, carry
# [".ref/sam3_src.tar.xz"] (tar cJf .ref/sam3_src.tar.xz -C .ref sam3_src, after stage_meta_sam3.sh).
# One file comes back: $OUT/sam3-video.tgz (sam3/video and sam3/video.log; ~1 MB). Unpack here:
#   tar xzf FILES/sam3-video.tgz -C /tmp && diff -r /tmp/sam3/video gpu/src/test/resources/fixtures/sam3/video
set -euo pipefail
final=${OUT:-/tmp/sam3-fixtures-out}
work=$(mktemp -d)
mkdir -p "$work/sam3" "$final"
[ -d .ref/sam3_src ] || tar xJf .ref/sam3_src.tar.xz -C .ref
export PYTHONPATH=$PWD/.ref/sam3_src
status=0
python3 tools/sam3_fixtures/make_sam3_video_fixtures.py --sam3 .ref/sam3_src --out "$work/sam3/video" --device cpu \
    > "$work/sam3/video.log" 2>&1 || status=1
tail -5 "$work/sam3/video.log"
tar czf "$final/sam3-video.tgz" -C "$work" $(cd "$work" && ls -d sam3/video sam3/video.log 2>/dev/null)
rm -rf "$work"
ls -la "$final"
exit $status
