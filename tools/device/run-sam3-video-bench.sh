#!/usr/bin/env bash
# SAM 3 video tracking at the release shapes (random weights) on the GPU machine, in one device call (issue #33's
# measurement): Meta's Sam3VideoPredictor first (bench/sam3_torch.py, bf16, eager unless META_COMPILE=1), then
# samstream's (io.samstream.bench.Sam3VideoBench, --device cuda), the same scenarios (streams x phrases,
# default 1x1,4x1,16x1), clip (640 x 480, five moving shapes), thresholds rule (about 5 objects a stream) and TSV
# columns; the class comment of Sam3VideoBench and the header of bench/sam3_torch.py say what is measured and how.
#
# 1. Stage (here, from the repository root): bash tools/device/run-sam3-video-bench.sh stage [SAM3_MIRROR]
#    builds the gpu and bench jars (tools/device/prepare-gpu-tests.sh, GPU_ONLY=1 DEVICE_DIR=sam3video) and keeps
#    what Sam3VideoBench loads in .device/sam3video/run (gpu, bench, config, JCuda and JNA for linux-x86-64 only,
#    Jackson, Typesafe config, SLF4J: ~7 MB; the lib folder beside it holds every module's test dependencies too,
#    ~46 MB, more than can travel), a JRE of the modules it needs in .device/sam3video/jre.tar.xz (~11 MB: no
#    java.desktop, which only ImageFiles uses), and Meta's sam3 package with ftfy (tools/sam3_fixtures/
#    stage_meta_sam3.sh from SAM3_MIRROR, default /work/.mirror/facebookresearch+sam3/repo; never committed) in
#    .ref/sam3_src.tar.xz (~2 MB). The tree travels too: with the example models (~24 MB of its ~45 MB, none read
#    here) moved aside for the call, tree and carry stay under the device tool's 64 MiB.
# 2. One device call (timeout_s 600), carry [".device/sam3video/run", ".device/sam3video/jre.tar.xz",
#    ".ref/sam3_src.tar.xz"]:
#      bash tools/device/run-sam3-video-bench.sh
#
# Time budget: BUDGET seconds for both (default 560, inside the call's 600): Meta gets META_TIMEOUT (default 240),
# samstream what is left. With the defaults (FRAMES=10 a window, WARMUP=16, REPEATS=3) a session or stream steps
# 47 frames, 752 at 16 streams; both programs write their TSV after every scenario, so a cut run keeps its rows.
# Overrides: SCENARIOS, FRAMES, WARMUP, REPEATS, INSTANCES, HEURISTICS (off|on), META_ARGS, JAVA_ARGS (e.g.
# "--long-frames 3000"), JVM_ARGS (the JVM's own, e.g. "-XX:StartFlightRecording=filename=$OUT/s.jfr,settings=profile"
# for a Flight Recorder profile: the JRE has jdk.jfr), META=0 or JAVA=0 to skip one side. META_COMPILE=1 runs Meta
# compiled (its own torch.compile path, GEMM and convolution autotuning on ATen so that it fits a call; an untimed
# pass compiles first): try it with JAVA=0 in a call of its own, and keep it beside samstream when both fit.
# On an H100 the compile did not finish within a call, and its Inductor cache packs to more than a call returns
# (bench/results/2026-12-08-h100-memory-mode-host.md), so it cannot be carried to the next call either.
#
# Back in $OUT (the device tool returns at most 8 files; TESTS=1 adds tests-log.txt): sam3-meta.tsv, sam3-samstream.tsv, their logs (the last
# 4 MB of each) and nvidia-smi.txt. Exit status: non-zero when either side failed or ran out of time.
set -uo pipefail
if [ "${1:-run}" = stage ]; then
    set -e
    GPU_ONLY=1 DEVICE_DIR=sam3video tools/device/prepare-gpu-tests.sh "$PWD"
    d=.device/sam3video
    rm -rf "$d/run" && mkdir -p "$d/run"
    for j in samstream-gpu samstream-bench samstream-config jcuda jcuda-natives jna jackson-core jackson-databind \
        jackson-annotations config slf4j-api; do
        cp "$d"/lib/"$j"-[0-9]*.jar "$d/run/"
    done
    jna=$(ls "$d"/run/jna-*.jar)
    zip -q -d "$jna" $(unzip -Z1 "$jna" | grep -E '^com/sun/jna/[a-z0-9]+-[^/]+/' | grep -v '^com/sun/jna/linux-x86-64/')
    cp "$d/COMMIT" "$d/run/"
    jre=$(mktemp -d)
    jlink --add-modules java.base,java.logging,java.management,java.xml,jdk.management,jdk.unsupported,jdk.jfr --strip-debug \
        --no-man-pages --no-header-files --output "$jre/jre"
    tar cf - -C "$jre" jre | xz -6 -T0 > "$d/jre.tar.xz"
    rm -rf "$jre"
    # The SAM 3 GPU tests (TESTS=1 runs them before the bench): test classes, SAM 2 / SAM 3 tiny fixtures, the
    # testkit and the JUnit console, packed (~4 MB); the engine jars come from run/ on the device.
    t=$(mktemp -d) && mkdir -p "$t/sam3t/lib"
    cp -r "$d/test-classes" "$d/fixtures" "$d/run-gpu-tests.sh" "$d/COMMIT" "$t/sam3t/"
    cp "$d"/lib/junit-platform-console-standalone-*.jar "$d"/lib/samstream-testkit-*.jar "$t/sam3t/lib/"
    tar cf - -C "$t" sam3t | xz -9e -T0 > "$d/tests.tar.xz"
    rm -rf "$t"
    tools/sam3_fixtures/stage_meta_sam3.sh "${2:-/work/.mirror/facebookresearch+sam3/repo}"
    tar cJf .ref/sam3_src.tar.xz -C .ref sam3_src
    du -ch "$d/run" "$d/jre.tar.xz" "$d/tests.tar.xz" .ref/sam3_src.tar.xz | tail -1
    echo 'carry [".device/sam3video/run", ".device/sam3video/jre.tar.xz", ".ref/sam3_src.tar.xz"], command:'
    echo '  bash tools/device/run-sam3-video-bench.sh'
    exit 0
fi

final=${OUT:-/tmp/sam3-video-bench-out}
work=$(mktemp -d)
mkdir -p "$final"
start=$(date +%s)
status=0
scenarios=${SCENARIOS:-1x1,4x1,16x1}
common=(--scenarios "$scenarios" --frames "${FRAMES:-10}" --warmup "${WARMUP:-16}" --repeats "${REPEATS:-3}"
    --instances "${INSTANCES:-5}" --heuristics "${HEURISTICS:-off}")
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$final/nvidia-smi.txt" 2>&1
cat "$final/nvidia-smi.txt"
echo "commit $(cat .device/sam3video/run/COMMIT 2>/dev/null)"

# The last 4 MB of a log into $OUT (tqdm's bars and warnings can make Meta's long).
keep_log() {
    tail -c 4000000 "$work/$1" > "$final/$1" 2>/dev/null
}

# TESTS=1: the SAM 3 GPU tests first (run-gpu-tests.sh sam3, each class at most CLASS_TIMEOUT s, all of them at
# most TESTS_TIMEOUT s; the log comes back as tests-log.txt), on the full JRE .device/jre.tar.xz when it travels.
if [ "${TESTS:-0}" = 1 ]; then
    echo "=== SAM 3 GPU tests ($(date -u +%T))"
    rm -rf /tmp/sam3t-jre /tmp/sam3t && mkdir -p /tmp/sam3t-jre && tar xJf .device/sam3video/tests.tar.xz -C /tmp
    jre=.device/jre.tar.xz; [ -s "$jre" ] || jre=.device/sam3video/jre.tar.xz
    tar xJf "$jre" -C /tmp/sam3t-jre && cp .device/sam3video/run/*.jar /tmp/sam3t/lib/
    PATH=/tmp/sam3t-jre/jre/bin:$PATH SAM3_BENCH=0 CLASS_TIMEOUT=${CLASS_TIMEOUT:-100} OUT=$final/tests \
        timeout "${TESTS_TIMEOUT:-220}" bash /tmp/sam3t/run-gpu-tests.sh sam3 > "$work/tests-log.txt" 2>&1 \
        || { status=1; echo "the GPU tests failed or ran out of time"; }
    grep -E '^(===|!!!)|tests (successful|failed)|IoU|cosine' "$work/tests-log.txt" | tail -60
    keep_log tests-log.txt
fi

if [ "${META:-1}" != 0 ]; then
    echo "=== Meta's Sam3VideoPredictor ($(date -u +%T))"
    [ -d .ref/sam3_src ] || tar xJf .ref/sam3_src.tar.xz -C .ref
    meta=()
    if [ "${META_COMPILE:-0}" = 1 ]; then
        meta=(--compile)
        export TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN TORCHINDUCTOR_MAX_AUTOTUNE_CONV_BACKENDS=ATEN
    fi
    PYTHONPATH="$PWD/.ref/sam3_src:$PWD/tools/sam3_fixtures" timeout "${META_TIMEOUT:-240}" python3 bench/sam3_torch.py \
        "$final/sam3-meta.tsv" "${common[@]}" ${meta[@]+"${meta[@]}"} ${META_ARGS:-} > "$work/sam3-meta-log.txt" 2>&1 \
        || { status=1; echo "Meta's run failed or ran out of time:"; tail -25 "$work/sam3-meta-log.txt"; }
    keep_log sam3-meta-log.txt
    cat "$final/sam3-meta.tsv" 2>/dev/null
fi

if [ "${JAVA:-1}" != 0 ]; then
    echo "=== samstream's Sam3VideoBench ($(date -u +%T))"
    rm -rf /tmp/sam3-jre && mkdir -p /tmp/sam3-jre && tar xJf .device/sam3video/jre.tar.xz -C /tmp/sam3-jre
    cp=$(ls .device/sam3video/run/*.jar | tr '\n' ':')
    left=$(( ${BUDGET:-560} - ($(date +%s) - start) ))
    [ "$left" -gt 30 ] || left=30
    timeout "$left" /tmp/sam3-jre/jre/bin/java -Xmx48g ${JVM_ARGS:-} -cp "$cp" io.samstream.bench.Sam3VideoBench "$final/sam3-samstream.tsv" \
        --config release --device cuda "${common[@]}" ${JAVA_ARGS:-} > "$work/sam3-samstream-log.txt" 2>&1 \
        || { status=1; echo "samstream's run failed or ran out of time ($left s):"; tail -25 "$work/sam3-samstream-log.txt"; }
    keep_log sam3-samstream-log.txt
    cat "$final/sam3-samstream.tsv" 2>/dev/null
fi
rm -rf "$work"
echo "done in $(( $(date +%s) - start )) s"
ls -la "$final"
exit $status
