#!/usr/bin/env bash
# Runs on the GPU machine, from the root of the tree the device tool sent, after tools/device/stage-app.sh's
# three-call staging (see its header): the application on the GPU.
#   demo     ./samstream demo through the launcher (device auto -> CUDA there), its output and log
#   nvdec    connectors' FfmpegFrameSourceTest (NVDEC decodes the same frames as the CPU decoder)
#   stream   io.samstream.bench.StreamBench: 1/4/16 concurrent 1080p H.264 streams, vit_b (random weights)
#            on CUDA (STREAMS, FRAMES, STREAM_ARGS, STREAM_TIMEOUT override), $OUT/stream-bench.md + stream-log.txt
#   track    io.samstream.bench.TrackEval on CUDA and CPU (TRACK_DEVICES, TRACK_MODES, TRACK_FAMILIES, TRACK_TIMEOUT, TRACK_NAME, TRACK_ARGS), tables
#            in $OUT, and their comparison (TrackCompare) in track-eval-compare.md
#   gputests the gpu module's GPU test classes (run-gpu-tests.sh tests on the staged classes; CLASSES picks)
#   engine   stream's CudaEngineGpuTest (the whole engine on CUDA against the CPU backend: same ids, mask IoU) and
#            GpuFramesGpuTest (NVDEC's frames read in place on the GPU encode as the CPU decoder's RGB) and
#            MultiGpuEngineGpuTest (samstream.gpus = all against [0]; NVDEC's frames on their stream's GPU)
#   sam2     io.samstream.bench.Sam2VideoBench (hiera_tiny 1x1, 1x8) then Meta's SAM2VideoPredictorVOS, compiled
#            (bench/sam2_torch.py --predictor vos; GEMM and conv autotuning on ATen to fit the run), then Meta's eager
#            predictor: the three in one call, $OUT/sam2-{video,vos,eager}.tsv. Needs ".ref" (Meta's sam2 package) carried.
#            SAM2_MODELS, SAM2_COMPILE_MODE, SAM2_PREDICTORS ("vos eager") override.
#   memory   io.samstream.bench.MemoryModeBench: memory mode, live 1080p30 cameras x K objects ($OUT/memory-mode.md;
#            MEMORY_MODEL, MEMORY_LIVE, MEMORY_OBJECTS, MEMORY_SECONDS, MEMORY_TIMEOUT override)
#   bash .device/stage-scripts/run-app.sh [demo] [nvdec] [stream] [track] [gputests] [sam2]  (default: the first four)
set -uo pipefail
stage=.device/stage
# Everything lands in a temporary folder and comes back as $OUT/app-results.tgz (the device tool returns 8 files at most).
final=${OUT:-/tmp/out}
out=$(mktemp -d)
mkdir -p "$final"
modes=${*:-demo nvdec stream track}
status=0
echo "commit $(cat $stage/COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
java -version 2>&1 | head -1
cp="$stage/app:$stage/bench"
export LD_LIBRARY_PATH="$PWD/.device/stage-scripts/native${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # libjpeg (stage-app.sh)

# What was measured so far, after every mode: a run cut short (device time, limits) still returns it.
save() {
    cp "$out"/*.md "$final/" 2>/dev/null
    tar czf "$final/app-results.tgz" -C "$out" . 2>/dev/null
}

for mode in $modes; do
    echo "=== $mode ($(date -u +%T))"
    case "$mode" in
        demo)
            # The launcher wants a jar: zip the staged classes back into one (stored, fast).
            (cd "$stage/app" && python3 - <<'PY'
import os, zipfile
with zipfile.ZipFile('/tmp/samstream.jar', 'w', zipfile.ZIP_STORED) as z:
    z.write('META-INF/MANIFEST.MF')
    for root, _, files in os.walk('.'):
        for f in files:
            p = os.path.relpath(os.path.join(root, f))
            if p != 'META-INF/MANIFEST.MF':
                z.write(p)
PY
            )
            SAMSTREAM_JAR=/tmp/samstream.jar JAVA_OPTS=-Xmx8g ./samstream demo --out /tmp/demo \
                > "$out/demo-log.txt" 2>&1 || status=1
            tail -25 "$out/demo-log.txt"
            cp /tmp/demo/overlay.mp4 "$out/demo-overlay.mp4" 2>/dev/null || true
            head -c 200000 /tmp/demo/masks.jsonl > "$out/demo-masks-head.jsonl" 2>/dev/null || true
            ;;
        nvdec)
            java -jar "$stage"/lib/junit-platform-console-standalone-*.jar execute \
                -cp "$stage/connectors-tests:$stage/app" --select-class io.samstream.connectors.video.FfmpegFrameSourceTest \
                --details=tree --disable-banner 2>&1 | tail -40 || status=1
            ;;
        stream)
            # Bounded (STREAM_TIMEOUT s): the table is rewritten after each stream count, so a cut run keeps its rows.
            # -XX:+PrintClassHistogram: the bench's SIGQUIT prints what the heap holds when a live row's heap grows.
            timeout "${STREAM_TIMEOUT:-300}" java -Xmx32g -XX:+PrintClassHistogram ${STREAM_JAVA_OPTS:-} -cp "$cp" \
                io.samstream.bench.StreamBench "$out/stream-bench.md" \
                --random-vit-b --device cuda --streams "${STREAMS:-1,4,16}" --frames "${FRAMES:-60}" ${STREAM_ARGS:-} 2>&1 \
                | grep --line-buffered -v DEBUG > "$out/stream-log.txt" || status=1
            grep -E '^\||decoder h|Exception|ERROR' "$out/stream-log.txt" | head -40
            cat "$out/stream-bench.md" 2>/dev/null
            ;;
        track)
            if [ -f "$stage/bench/io/samstream/bench/TrackEval.class" ]; then
                fam=${TRACK_FAMILIES:-default}
                # TRACK_NAME names the tables (default: the families); TRACK_ARGS go to TrackEval (e.g. --model, --threads).
                name=${TRACK_NAME:-$fam}
                for d in ${TRACK_DEVICES:-cuda cpu}; do
                    timeout "${TRACK_TIMEOUT:-200}" java -Xmx16g -cp "$cp" io.samstream.bench.TrackEval --device $d \
                        --modes "${TRACK_MODES:-box,discovery}" --families "$fam" --out "$out/track-eval-$name-$d.md" \
                        --commit "$(cat $stage/COMMIT)" ${TRACK_ARGS:-} > "$out/track-eval-$name-$d.log" 2>&1 || status=1
                    grep -E '^\| \*\*all|^\| [a-z-]+ \| [0-9]+ \||Exception|ERROR' "$out/track-eval-$name-$d.log" | head -20
                    save
                done
                # Issue #6: the same figures on CPU and GPU within 0.02 (TrackEval writes a .tsv next to each .md).
                if [ -f "$stage/bench/io/samstream/bench/TrackCompare.class" ] && [ -s "$out/track-eval-$name-cpu.tsv" ] \
                        && [ -s "$out/track-eval-$name-cuda.tsv" ]; then
                    java -cp "$cp" io.samstream.bench.TrackCompare "$out/track-eval-$name-cpu.tsv" \
                        "$out/track-eval-$name-cuda.tsv" --out "$out/track-eval-$name-compare.md" | tail -3 || status=1
                fi
            else
                echo "no TrackEval in this build: skipped"
            fi
            ;;
        engine)
            # From stream/ like Maven, so the test finds ../examples/sam-demo-synthetic.pth.
            root=$PWD
            (cd stream && java -jar "$root/$stage"/lib/junit-platform-console-standalone-*.jar execute \
                -cp "$root/$stage/stream-tests:$root/$stage/connectors-tests:$root/$stage/app" \
                --select-class io.samstream.stream.engine.CudaEngineGpuTest \
                --select-class io.samstream.stream.engine.GpuFramesGpuTest \
                --select-class io.samstream.stream.engine.MultiGpuEngineGpuTest --details=tree --disable-banner) \
                > "$out/engine-gpu-test.txt" 2>&1 || status=1
            grep -vE "DEBUG|INFO" "$out/engine-gpu-test.txt" | tail -30
            ;;
        sam2)
            models=${SAM2_MODELS:-hiera_tiny}
            timeout 240 java -Xmx48g -cp "$cp" io.samstream.bench.Sam2VideoBench "$out/sam2-video.tsv" \
                --models "$models" --scenarios 1x1,1x8 --frames 40 --warmup 16 --repeats 3 \
                > "$out/sam2-video-log.txt" 2>&1 || status=1
            cat "$out/sam2-video.tsv"
            for predictor in ${SAM2_PREDICTORS:-vos eager}; do
                TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN TORCHINDUCTOR_MAX_AUTOTUNE_CONV_BACKENDS=ATEN \
                    PYTHONPATH="$PWD/.ref:$PWD/tools/sam2_fixtures" timeout 420 python3 bench/sam2_torch.py \
                    "$out/sam2-$predictor.tsv" --models "$models" --frames 30 --predictor "$predictor" \
                    --compile-mode "${SAM2_COMPILE_MODE:-max-autotune}" > "$out/sam2-$predictor-log.txt" 2>&1 || status=1
                tail -4 "$out/sam2-$predictor-log.txt"
                save
            done
            ;;
        memory)
            # Memory mode at engine level: live 1080p30 test-pattern cameras, K objects each (MemoryModeBench).
            timeout "${MEMORY_TIMEOUT:-400}" java -Xmx48g -cp "$cp" io.samstream.bench.MemoryModeBench \
                "$out/memory-mode.md" --model "${MEMORY_MODEL:-hiera_tiny}" --device cuda \
                --live "${MEMORY_LIVE:-1,8,16}" --objects "${MEMORY_OBJECTS:-1,4}" --seconds "${MEMORY_SECONDS:-30}" \
                > "$out/memory-mode-log.txt" 2>&1 || status=1
            cat "$out/memory-mode.md" 2>/dev/null || tail -20 "$out/memory-mode-log.txt"
            ;;
        gputests)
            g=.device/gputests
            mkdir -p "$g/lib" && cp "$stage"/lib/junit-platform-console-standalone-*.jar "$g/lib/"
            EXTRA_CP="$stage/app:$stage/bench" CLASS_TIMEOUT="${CLASS_TIMEOUT:-150}" bash "$g/run-gpu-tests.sh" tests \
                2>&1 | grep -E '^=== |tests (successful|failed|aborted)|FAILED|!!!|MethodSource|=> ' | head -80 || status=1
            ;;
        *) echo "unknown mode $mode"; status=1 ;;
    esac
    save
done
exit $status
