#!/usr/bin/env bash
# SAM 2.1 video tracking beside Meta's compiled SAM2VideoPredictorVOS in one device call (issue #32's comparison):
# samstream's io.samstream.bench.Sam2VideoBench first, then bench/sam2_torch.py --predictor vos (max-autotune with CUDA
# graphs; GEMM and convolution tuning on ATen so that compiling fits the call). What each side measures: the class
# comment of Sam2VideoBench and the header of bench/sam2_torch.py. Results: bench/results/*-sam2-*.md.
#
# 1. Stage (here, from the repository root): bash tools/device/run-sam2-video-bench.sh stage [SAM2_MIRROR]
#    reuses the SAM 3 bench's staging (tools/device/run-sam3-video-bench.sh stage: the gpu and bench jars and a compact
#    JRE in .device/sam3video) and puts Meta's sam2 package in .ref/sam2 (from SAM2_MIRROR, default
#    /work/.mirror/facebookresearch+sam2/repo; git-ignored, never committed). Move the example models aside for the
#    call (examples/sam-demo-synthetic.pth, examples/sam2-demo-synthetic.pt) so that tree and carry fit 64 MiB.
# 2. One device call (timeout_s 600), carry [".device/sam3video/run", ".device/sam3video/jre.tar.xz", ".ref/sam2"]:
#      bash tools/device/run-sam2-video-bench.sh
#
# Overrides: MODELS (hiera_tiny), SCENARIOS (1x1,1x8,32x1), FILE_STEP (32: a second run of 1x1 with that many frames
# of the file a step; 0 skips it), META=0 (samstream alone), BUDGET (580 s for both; Meta gets what samstream left).
# Back in $OUT: sam2-samstream.tsv, sam2-file-step.tsv, sam2-vos.tsv, their logs (the last 3 MB) and nvidia-smi.txt.
#
# Memory mode at engine level (issue #32 item 4: io.samstream.bench.MemoryModeBench, live 1080p30 test-pattern
# cameras x K objects through the engine): the stage also packs the engine's classes (the stream and connectors
# modules, Akka, Scala, Logback, Micrometer: ~18 MB of jars) unpacked into one xz archive,
# .device/sam3video/engine.tar.xz (~7 MB; classes compress far better together than jar by jar), so that it travels
# in the same one call. Carry it too and run with MEMORY=1 (SAM2=0 META=0 for that alone): LIVE (1,4,8), OBJECTS
# (1), ROW_SECONDS (60 a row), MEMORY_MODEL (hiera_tiny) -> $OUT/memory-mode.md and its log.
set -uo pipefail
if [ "${1:-run}" = stage ]; then
    set -e
    bash tools/device/run-sam3-video-bench.sh stage
    mkdir -p .ref && rm -rf .ref/sam2
    git -C "${2:-/work/.mirror/facebookresearch+sam2/repo}" archive HEAD sam2 | tar x -C .ref
    # the engine's classes for MemoryModeBench: the jars it loads beyond run/'s (found with -verbose:class on a CPU
    # run), each unpacked into a folder of its own, which goes on the class path as it is
    engine=$(mktemp -d)
    mvn -B -q -ntp -pl bench dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$engine/jars"
    cp stream/target/samstream-stream-[0-9]*.jar connectors/target/samstream-connectors-[0-9]*.jar "$engine/jars/"
    for j in samstream-stream samstream-connectors scala-library akka-actor_2.13 akka-stream_2.13 akka-slf4j_2.13 \
        scala-java8-compat_2.13 reactive-streams logback-core logback-classic micrometer-core micrometer-commons \
        micrometer-observation HdrHistogram; do
        mkdir -p "$engine/engine/$j" && unzip -q "$(ls "$engine/jars/$j"-[0-9]*.jar)" -d "$engine/engine/$j"
    done
    tar cf - -C "$engine" engine | xz -9e -T0 > .device/sam3video/engine.tar.xz
    rm -rf "$engine"
    du -ch .device/sam3video/run .device/sam3video/jre.tar.xz .device/sam3video/engine.tar.xz .ref/sam2 | tail -1
    echo 'carry [".device/sam3video/run", ".device/sam3video/jre.tar.xz", ".ref/sam2"] (+ ".device/sam3video/engine.tar.xz" with MEMORY=1), command:'
    echo '  bash tools/device/run-sam2-video-bench.sh'
    exit 0
fi

out=${OUT:-/tmp/sam2-video-bench-out}
mkdir -p "$out"
start=$(date +%s)
status=0
models=${MODELS:-hiera_tiny}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"
echo "commit $(cat .device/sam3video/run/COMMIT 2>/dev/null)"
rm -rf /tmp/sam2-jre && mkdir -p /tmp/sam2-jre && tar xJf .device/sam3video/jre.tar.xz -C /tmp/sam2-jre
java=/tmp/sam2-jre/jre/bin/java
cp=$(ls .device/sam3video/run/*.jar | tr '\n' ':')

if [ "${SAM2:-1}" != 0 ]; then
echo "=== samstream's Sam2VideoBench ($(date -u +%T))"
timeout 150 "$java" -Xmx48g -cp "$cp" io.samstream.bench.Sam2VideoBench "$out/sam2-samstream.tsv" --models "$models" \
    --scenarios "${SCENARIOS:-1x1,1x8,32x1}" --frames 40 --warmup 16 --repeats 3 > "$out/sam2-samstream-log.txt" 2>&1 \
    || { status=1; echo "samstream's run failed or ran out of time:"; tail -20 "$out/sam2-samstream-log.txt"; }
cat "$out/sam2-samstream.tsv" 2>/dev/null
k=${FILE_STEP:-32}
if [ "$k" -gt 0 ]; then
    timeout 90 "$java" -Xmx48g -cp "$cp" io.samstream.bench.Sam2VideoBench "$out/sam2-file-step.tsv" --models "$models" \
        --scenarios 1x1 --frames $((4 * k)) --warmup "$k" --repeats 3 --frames-per-step "$k" \
        > "$out/sam2-file-step-log.txt" 2>&1 || { status=1; tail -20 "$out/sam2-file-step-log.txt"; }
    tail -n +2 "$out/sam2-file-step.tsv" 2>/dev/null
fi
fi

if [ "${MEMORY:-0}" = 1 ]; then
    echo "=== samstream's MemoryModeBench ($(date -u +%T))"
    rm -rf /tmp/sam2-engine && mkdir -p /tmp/sam2-engine && tar xJf .device/sam3video/engine.tar.xz -C /tmp/sam2-engine
    ecp=$(ls -d /tmp/sam2-engine/engine/* | tr '\n' ':')
    # ENGINE_FIRST: class folders or jars put ahead of the staged engine's (another build's stream classes, for an
    # A/B in one call: tools/device/stage-engine-first.sh REV makes them); JVM_ARGS: e.g. a Flight Recorder profile
    live=${LIVE:-1,4,8} rows=$(( $(echo "${LIVE:-1,4,8}" | tr ',' '\n' | wc -l) * $(echo "${OBJECTS:-1}" | tr ',' '\n' | wc -l) ))
    timeout $(( rows * (${ROW_SECONDS:-60} + 40) + 60 )) "$java" -Xmx48g ${JVM_ARGS:-} -cp "${ENGINE_FIRST:+$ENGINE_FIRST:}$cp$ecp" \
        io.samstream.bench.MemoryModeBench \
        "$out/memory-mode.md" --model "${MEMORY_MODEL:-hiera_tiny}" --device cuda --live "$live" \
        --objects "${OBJECTS:-1}" --seconds "${ROW_SECONDS:-60}" --size 1920x1080 > "$out/memory-mode-log.txt" 2>&1 \
        || { status=1; echo "MemoryModeBench failed or ran out of time:"; tail -20 "$out/memory-mode-log.txt"; }
    cat "$out/memory-mode.md" 2>/dev/null
    tail -c 3000000 "$out/memory-mode-log.txt" > "$out/mm.tmp" && mv "$out/mm.tmp" "$out/memory-mode-log.txt"
fi

if [ "${META:-1}" != 0 ]; then
    left=$(( ${BUDGET:-580} - ($(date +%s) - start) ))
    echo "=== Meta's SAM2VideoPredictorVOS, compiled, $left s ($(date -u +%T))"
    TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN TORCHINDUCTOR_MAX_AUTOTUNE_CONV_BACKENDS=ATEN \
        PYTHONPATH="$PWD/.ref:$PWD/tools/sam2_fixtures" timeout "$left" python3 bench/sam2_torch.py "$out/sam2-vos.tsv" \
        --models "$models" --frames 30 --predictor vos --compile-mode max-autotune > "$out/sam2-vos-log.txt" 2>&1 \
        || { status=1; echo "Meta's run failed or ran out of time"; }
    grep -E "predictor frames/s|Error" "$out/sam2-vos-log.txt" | tail -6
    tail -c 3000000 "$out/sam2-vos-log.txt" > "$out/vos.tmp" && mv "$out/vos.tmp" "$out/sam2-vos-log.txt"
fi
echo "done in $(( $(date +%s) - start )) s"
exit $status
