#!/usr/bin/env bash
# Runs on the GPU machine (no Java, no network there): the CUDA tests of the gpu module, then the kernel
# benchmark and PyTorch's numbers on the same shapes. Prepared here by tools/device/prepare-gpu-tests.sh,
# which copies this script to .device/cuda/ with the classes and jars; start it from the root of the
# tree the device tool sent:
#
#   tar xJf .device/jre.tar.xz -C /tmp && export PATH=/tmp/jre/bin:$PATH && set -o pipefail &&
#   bash .device/cuda/run-gpu-tests.sh [tests|bench|all|sanitize|encoder|decoder|imageops|track-eval|sparse|fp8|sam3] 2>&1 | tee $OUT/log.txt
#
# Each GPU test class runs in its own JVM (a kernel fault poisons its CUDA context; the next class still
# gets a clean one), under a time limit. Results, in $OUT (default .device/cuda/out):
#   reports-MODE.tgz  JUnit XML per class, the per-class logs, nvidia-smi
#   cuda-bench.tsv samstream's kernel timings (io.samstream.bench.CudaKernelBench)
#   bench-table.md samstream next to PyTorch (bench/torch_kernels.py): copy it to bench/results/
#   encoder-bench.tsv, encoder-table.md  (modes encoder / all) the whole vit_b encoder at batch 1/8/32
#                  (ENCODER_BATCHES) next to Meta's bf16 eager encoder; run from a tree with
#                  .ref/segment_anything and PYTHONPATH=.ref
#   track-eval-cpu.md, track-eval-cuda.md (+ .tsv), track-eval-compare.md  (mode track-eval) the tracking
#                  benchmark (io.samstream.bench.TrackEval: synthetic clips through the whole engine with
#                  examples/sam-demo-synthetic.pth; J&F, id switches, discovery recall) on the CPU backend and
#                  on CUDA, and their comparison (TrackCompare: every figure within 0.02?);
#                  TRACK_EVAL_CONFIG="HOCON" is passed as --engine-config (added to every mode's default)
# Mode "sparse": the hang checks of the TMA sparse GEMM and the wgmma attention (SparseGemmSm90GpuTest#tmaKernelsNeverHang,
#   AttentionGpuTest#wgmmaKernelsFinish, 180 s each), then SparseGemmGpuTest, SparseGemmSm90GpuTest (the Hopper sparse
#   tiles; only in this mode; all in cuda.kernels) (or $CLASSES), the default dense and every 2:4 sparse GEMM row of CudaKernelBench and the
#   vit_b attention rows (sparse-kernels.tsv), then EncoderBench dense / 2:4 all / 2:4 mlp (encoder-*.tsv;
#   SPARSE_RUNS="sparsity layers,..." picks others; none when the attention hang check failed), and
#   bench/sparse_table.py's sparse-speed.md (both side by side: copy it to bench/results/).
# Mode "fp8" (samstream.model.precision = fp8, issue 32): the FP8 GEMM's hang check (Fp8GemmGpuTest#pipelineNeverHangs,
#   180 s), then Fp8GemmGpuTest (cuda.kernels) and parity.Fp8EncoderGpuTest (fp8 vs bf16 embeddings and masks) (or
#   $CLASSES; CLASS_TIMEOUT each); then, when the hang check passed, the default bf16 GEMM rows and every e4m3 row of
#   CudaKernelBench (fp8-kernels.tsv), and EncoderBench at batch ${ENCODER_BATCHES:-32} alternating bf16 / fp8,
#   $FP8_RUNS times each (default 3; encoder-bf16-N.tsv, encoder-fp8-N.tsv), summarised as the median GPU img/s of
#   each in fp8-speed.md.
# Mode "sam3" (issue 33): SAM 3's GPU test classes and the kernels' own they rely on (or $CLASSES; CLASS_TIMEOUT each),
#   then io.samstream.bench.Sam3VitBench (every SAM 3 image part at the release shapes, GPU ms and the decoder's and
#   mask head's whole host calls) -> sam3-parts.txt (SAM3_BENCH=0: the tests only).
# Mode "hopper" (every Hopper GEMM pipeline and attention variant side by side) went with the variants that lost
#   their benchmarks (bench/results/README.md); the hang checks run in "sparse" and in the test classes.
# Mode "encoder": the encoder's test classes (attention, encoder ops, CUDA parity) and that benchmark.
# Mode "decoder": every test class (per-class limit $CLASS_TIMEOUT s, default 300), then the mask decoder
#   benchmark (io.samstream.bench.DecoderBench: prompt sets/s at 1 and 64 sets, encoder/decoder overlap)
#   next to Meta's prompt encoder + mask decoder (bench/decoder_torch.py; needs PYTHONPATH=.ref):
#   decoder-bench.tsv, decoder-table.md.
# Mode "imageops": ImageOpsGpuTest (GPU pre- / post-processing vs the CPU reference) and
#   io.samstream.bench.ImageOpsBench (1080p, CPU vs GPU) -> imageops-bench.tsv; "all" runs both too.
# "sanitize" runs the test classes under compute-sanitizer: memcheck for every class, then racecheck
# (shared-memory hazards) for $RACECHECK_CLASSES (default: cuda.kernels.AttentionGpuTest cuda.kernels.GemmGpuTest).
# PROFILE="filter;filter..." also profiles one launch of each matching benchmark kernel with Nsight
# Compute (speed of light, occupancy, warp stall reasons), e.g.
#   PROFILE="attention vit_b global;gemm qkv bias T128x128x64" (filters as in CudaKernelBench)
# and writes the reports to ncu.txt.
# EXTRA_CP adds to the class path (tools/device/run-app.sh: the staged application's classes instead of lib/).
# Exit status: non-zero when a test class failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mode=${1:-all}
mkdir -p "$out"
work=$(mktemp -d)
status=0
failed=""   # the test classes that failed (mode sparse leaves the Hopper sparse tile out when its class did)
attn_failed=0
fp8_hang_failed=0
sparse_tma_failed=0

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv > "$work/nvidia-smi.txt" 2>&1 || true
cat "$work/nvidia-smi.txt"
java -version 2>&1 | head -1
# If JCuda's native library cannot load, say which shared library is missing.
(cd "$work" && unzip -q -o "$here"/lib/jcuda-natives-*.jar 'lib/libJCudaDriver*' 2>/dev/null &&
    ldd lib/libJCudaDriver*.so | grep -i 'not found') || true

cp="$here/test-classes${EXTRA_CP:+:$EXTRA_CP}"
for j in "$here"/lib/*.jar; do
    case "$j" in *junit-platform-console-standalone*) ;; *) cp="$cp:$j" ;; esac
done
console=$(ls "$here"/lib/junit-platform-console-standalone-*.jar)

# CLASS_TIMEOUT=S limits each test class to S seconds (default 300).
# CLASSES="A B ..." replaces the list of modes tests / all / decoder / sanitize / encoder (e.g. to run the classes a change touches first).
# A class is named from io.samstream.gpu (cuda.kernels.GemmGpuTest, parity.CudaParityGpuTest); one without a dot is
# in the CUDA runtime's package, io.samstream.gpu.cuda (CudaRuntimeGpuTest). The packages: cuda (the runtime),
# cuda.kernels (the launchers), cuda.sam, cuda.sam2 and cuda.sam3 (the models' GPU parts), parity and sam2 (against the CPU).
all_classes=${CLASSES:-"CudaAvailabilityTest CudaRuntimeGpuTest LaunchTimerGpuTest cuda.kernels.LayerNormGpuTest
    cuda.kernels.GemmGpuTest cuda.kernels.SparseGemmGpuTest cuda.kernels.Fp8GemmGpuTest cuda.kernels.AttentionGpuTest
    cuda.kernels.EncoderOpsGpuTest cuda.kernels.DetrKernelsGpuTest parity.Fp8EncoderGpuTest
    cuda.kernels.Sam2SdpaGpuTest cuda.sam.ImageOpsGpuTest parity.CudaParityGpuTest parity.CudaDecoderParityGpuTest
    parity.EmbeddingPathGpuTest parity.AppearanceSearchGpuTest cuda.sam2.CudaSam2ImageEncoderGpuTest
    cuda.sam2.CudaMemoryAttentionGpuTest cuda.sam2.CudaMemoryEncoderGpuTest sam2.Sam2CudaParityGpuTest
    sam2.Sam2MaskDecoderGpuTest cuda.sam3.CudaSam3VitGpuTest cuda.sam3.CudaSam3NeckGpuTest
    cuda.sam3.CudaSam3FusionEncoderGpuTest cuda.sam3.CudaSam3DecoderGpuTest cuda.sam3.CudaSam3MaskHeadGpuTest
    cuda.sam3.CudaSam3TrackerGpuTest cuda.sam3.Sam3GpuPreprocessorGpuTest cuda.sam3.CudaSam3ModelGpuTest"}
# The encoder's classes only (mode "encoder": its tests, then the encoder benchmark against Meta's).
encoder_classes="cuda.kernels.AttentionGpuTest cuda.kernels.EncoderOpsGpuTest parity.CudaParityGpuTest"
# SAM 3's GPU parts and the kernels only they use (mode "sam3": its tests, then Sam3VitBench).
sam3_classes="cuda.kernels.EncoderOpsGpuTest cuda.kernels.LayerNormGpuTest cuda.kernels.DetrKernelsGpuTest
    cuda.sam3.CudaSam3VitGpuTest cuda.sam3.CudaSam3NeckGpuTest cuda.sam3.CudaSam3FusionEncoderGpuTest
    cuda.sam3.CudaSam3DecoderGpuTest cuda.sam3.CudaSam3MaskHeadGpuTest cuda.sam3.CudaSam3TrackerGpuTest
    cuda.sam3.Sam3GpuPreprocessorGpuTest cuda.sam3.CudaSam3ModelGpuTest"
# Pre- and post-processing (mode "imageops": its test class, then ImageOpsBench).
imageops_classes="cuda.sam.ImageOpsGpuTest"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
runs=()
case "$mode" in
    tests | all | decoder) for c in $all_classes; do runs+=("plain:$c"); done ;;
    encoder) for c in ${CLASSES:-$encoder_classes}; do runs+=("plain:$c"); done ;;
    sparse)
        runs+=("method:cuda.kernels.SparseGemmSm90GpuTest#tmaKernelsNeverHang")
        runs+=("method:cuda.kernels.AttentionGpuTest#wgmmaKernelsFinish")
        for c in ${CLASSES:-cuda.kernels.SparseGemmGpuTest cuda.kernels.SparseGemmSm90GpuTest}; do runs+=("plain:$c"); done ;;
    fp8)
        runs+=("method:cuda.kernels.Fp8GemmGpuTest#pipelineNeverHangs")
        for c in ${CLASSES:-cuda.kernels.Fp8GemmGpuTest cuda.kernels.Fp8BlockScaleGpuTest parity.Fp8EncoderGpuTest}; do runs+=("plain:$c"); done ;;
    imageops) for c in $imageops_classes; do runs+=("plain:$c"); done ;;
    sam3) for c in ${CLASSES:-$sam3_classes}; do runs+=("plain:$c"); done ;;
    sanitize)
        for c in $all_classes; do runs+=("memcheck:$c"); done
        for c in ${RACECHECK_CLASSES:-cuda.kernels.AttentionGpuTest cuda.kernels.GemmGpuTest}; do runs+=("racecheck:$c"); done ;;
esac
for run in "${runs[@]}"; do
        tool=${run%%:*} cls=${run#*:}
        # Mode sparse: a class whose hang check failed would hang again at its first case; the device time goes to
        # the rest instead.
        if [ "$mode" = fp8 ] && [ "$tool" = plain ] && [ "$fp8_hang_failed" = 1 ] && [ "$cls" = cuda.kernels.Fp8GemmGpuTest ]; then
            echo "!!! $cls skipped: its hang check failed"
            status=1
            failed="$failed $cls"
            continue
        fi
        if [ "$mode" = sparse ] && [ "$tool" = plain ] && { { [ "$cls" = cuda.kernels.SparseGemmSm90GpuTest ] && [ "$sparse_tma_failed" = 1 ]; } ||
            { [ "$cls" = cuda.kernels.AttentionGpuTest ] && [ "$attn_failed" = 1 ]; }; }; then
            echo "!!! $cls skipped: its hang check failed"
            status=1
            failed="$failed $cls"
            continue
        fi
        echo "=== $cls ($tool)"
        start=$(date +%s)
        prefix=()
        select=(--select-class)
        if [ "$tool" = method ]; then
            select=(--select-method)
        elif [ "$tool" != plain ]; then
            [ -n "$sanitizer" ] || { echo "!!! compute-sanitizer not found"; status=1; break; }
            # API errors are not reported: the code checks every result itself, and one test provokes one.
            prefix=("$sanitizer" --tool "$tool" --print-limit 20 --report-api-errors no)
        fi
        case "$cls" in *.*) fqcn="io.samstream.gpu.$cls" ;; *) fqcn="io.samstream.gpu.cuda.$cls" ;; esac
        limit=${CLASS_TIMEOUT:-300}
        [ "$tool" = method ] && limit=180
        timeout "$limit" "${prefix[@]}" java -Xmx48g -Dsamstream.fixtures="$here/fixtures" -jar "$console" execute \
            --disable-banner --disable-ansi-colors --details=tree \
            --class-path "$cp" "${select[@]}" "$fqcn" \
            --reports-dir "$work/junit-$cls-$tool" > "$work/$cls-$tool.log" 2>&1
        rc=$?
        if [ "$tool" = method ] && [ $rc -ne 0 ]; then
            case "$cls" in *wgmmaKernelsFinish*) attn_failed=1 ;; *tmaKernelsNeverHang*) sparse_tma_failed=1 ;;
                *pipelineNeverHangs*) [ $rc -eq 124 ] && fp8_hang_failed=1 ;; esac
        fi
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$work/$cls-$tool.log"
        # The tree with the failures' messages; the full log is in reports.tgz.
        grep -vE '^\s+at |^\s+\.\.\. [0-9]+ more' "$work/$cls-$tool.log" | tail -60
        echo "=== $cls ($tool): exit $rc, $(( $(date +%s) - start )) s"
        [ $rc -ne 0 ] && { status=1; failed="$failed $cls"; }
        # On the GPU machine a skipped (aborted) test means the GPU was not usable: count it as a failure.
        if grep -qE '\[ +[1-9][0-9]* tests aborted' "$work/$cls-$tool.log"; then
            echo "!!! $cls: tests were skipped on the GPU machine: $(grep -m1 -o 'GPU tests skipped: .*' "$work/$cls-$tool.log")"
            status=1
        fi
        if grep -qE '(ERROR|RACECHECK) SUMMARY: [1-9]' "$work/$cls-$tool.log"; then
            echo "!!! $cls: compute-sanitizer $tool reported errors"
            status=1
        fi
done

if [ "$mode" = sam3 ] && [ "${SAM3_BENCH:-1}" != 0 ]; then
    echo "=== Sam3VitBench (SAM 3's GPU parts at the release shapes)"
    timeout 240 java -Xmx24g -cp "$cp" io.samstream.bench.Sam3VitBench 2>&1 | tee "$out/sam3-parts.txt" || status=1
fi

if [ "$mode" = bench ] || [ "$mode" = all ]; then
    echo "=== CudaKernelBench"
    timeout 240 java -Xmx8g -cp "$cp" io.samstream.bench.CudaKernelBench "$out/cuda-bench.tsv" 20 \
        2>&1 | tee "$work/bench.log" || status=1
    if [ -s "$out/cuda-bench.tsv" ]; then
        echo "=== PyTorch on the same shapes"
        PYTHONUNBUFFERED=1 timeout 240 python3 "$here/torch_kernels.py" --java "$out/cuda-bench.tsv" \
            --commit "$(cat "$here/COMMIT")" --out "$out/bench-table.md" 2>&1 | tee "$work/torch.log" || status=1
    fi
fi

if [ "$mode" = encoder ] || [ "$mode" = all ]; then
    echo "=== EncoderBench (vit_b, batch ${ENCODER_BATCHES:-1 8 32})"
    timeout 300 java -Xmx24g -cp "$cp" io.samstream.bench.EncoderBench "$out/encoder-bench.tsv" ${ENCODER_BATCHES:-1 8 32} \
        2>&1 | tee "$work/encoder-bench.log" || status=1
    if [ -s "$out/encoder-bench.tsv" ]; then
        echo "=== Meta segment-anything bf16 eager (needs .ref/segment_anything on PYTHONPATH)"
        PYTHONUNBUFFERED=1 timeout 240 python3 "$here/encoder_torch.py" --java "$out/encoder-bench.tsv" \
            --commit "$(cat "$here/COMMIT")" --out "$out/encoder-table.md" 2>&1 | tee "$work/encoder-torch.log" || status=1
    fi
fi

if [ "$mode" = sparse ]; then
    # The default dense tiles and every 2:4 sparse tile at the same shapes (TFLOP/s counted as 2MNK for both), then
    # the vit_b encoder dense and with 2:4 sparsity at ENCODER_BATCHES: all encoder linears, and the MLPs only.
    # Kernels only when their tests passed (a kernel that faults or hangs would take the run down): the Hopper sparse
    # tiles with SparseGemmSm90GpuTest, the TMA ones with their hang check too.
    sm90_ok=1 filter="re:^gemm (.*\(default\)|.*sparse2:4)"
    case " $failed " in *" cuda.kernels.SparseGemmSm90GpuTest "*) sm90_ok=0 filter="re:^gemm ((?!.*sparse2:4 H).*\(default\)|sparse2:4$|.*sparse2:4 S)" ;; esac
    # The attention kernels too (the vit_b rows) when their hang check passed; else no encoder run (it would hang).
    [ "$attn_failed" = 1 ] || filter="$filter|^attention vit_b"
    echo "=== CudaKernelBench (GEMMs: dense and 2:4 sparse; $filter)"
    timeout 240 java -Xmx8g -cp "$cp" io.samstream.bench.CudaKernelBench "$out/sparse-kernels.tsv" 20 "$filter" \
        2>&1 | tee "$work/sparse-kernels.log" || status=1
    # SPARSE_RUNS: which encoder runs, "sparsity layers" comma-separated.
    IFS=, read -ra sparse_runs <<< "${SPARSE_RUNS:-none all,2:4 all,2:4 mlp}"
    for sp in "${sparse_runs[@]}"; do
        set -- $sp
        if { [ "$1" != none ] && [ $sm90_ok = 0 ]; } || [ "$attn_failed" = 1 ]; then
            echo "!!! a hang check or SparseGemmSm90GpuTest failed: no encoder run --sparsity $1"
            continue
        fi
        name=$(echo "$1-$2" | sed 's/:/of/')
        echo "=== EncoderBench --sparsity $1 --sparse-layers $2 (vit_b, batch ${ENCODER_BATCHES:-1 8 32})"
        timeout 300 java -Xmx24g -cp "$cp" \
            io.samstream.bench.EncoderBench --sparsity "$1" --sparse-layers "$2" "$out/encoder-$name.tsv" \
            ${ENCODER_BATCHES:-1 8 32} 2>&1 | tee "$work/encoder-$name.log" || status=1
    done
    echo "=== sparse-speed.md (dense vs 2:4: GEMMs per shape, encoder per batch)"
    python3 "$here/sparse_table.py" --dir "$out" --commit "$(cat "$here/COMMIT")" --out "$out/sparse-speed.md" || status=1
    # The device tool brings back at most 8 files: the raw TSVs travel inside reports-sparse.tgz (raw/).
    mkdir -p "$work/raw" && cp "$out"/*.tsv "$work/raw/" 2>/dev/null && rm -f "$out"/encoder-*.tsv
fi

if [ "$mode" = fp8 ]; then
    if [ "$fp8_hang_failed" = 1 ]; then
        echo "!!! the FP8 GEMM's hang check failed: no fp8 benchmark"
    else
        echo "=== CudaKernelBench (GEMMs: default bf16 tiles and every e4m3 row, the quantize kernels)"
        timeout 240 java -Xmx8g -cp "$cp" io.samstream.bench.CudaKernelBench "$out/fp8-kernels.tsv" 20 \
            "re:^(gemm (.*\(default\)|.*e4m3|.*mlp pair)|quantize )" 2>&1 | tee "$work/fp8-kernels.log" || status=1
        for i in $(seq 1 "${FP8_RUNS:-3}"); do
            for p in bf16 fp8; do
                echo "=== EncoderBench --precision $p (vit_b, batch ${ENCODER_BATCHES:-32}), run $i"
                timeout 240 java -Xmx24g -cp "$cp" io.samstream.bench.EncoderBench --precision "$p" \
                    "$out/encoder-$p-$i.tsv" ${ENCODER_BATCHES:-32} 2>&1 | tee "$work/encoder-$p-$i.log" || status=1
            done
        done
        # Median GPU img/s per precision and batch over the runs (EncoderBench's "encoder" lines: batch, GPU ms, ...).
        {
            echo "# vit_b encoder, fp8 vs bf16 (GPU time, median of ${FP8_RUNS:-3} runs; commit $(cat "$here/COMMIT"))"
            echo
            echo "| precision | batch | img/s (median) | runs (img/s) |"
            echo "|---|---|---|---|"
            for p in bf16 fp8; do
                cat "$out"/encoder-$p-*.tsv 2>/dev/null | awk -F'\t' -v p=$p '$1 == "encoder" { r[$2] = r[$2] " " 1000 * $2 / $3 }
                    END { for (b in r) { n = split(r[b], v, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                        if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
                        printf "| %s | %s | %.1f |%s |\n", p, b, v[int((n + 1) / 2)], r[b] } }'
            done
        } > "$out/fp8-speed.md"
        cat "$out/fp8-speed.md"
        mkdir -p "$work/raw" && cp "$out"/*.tsv "$work/raw/" 2>/dev/null && rm -f "$out"/encoder-*.tsv
    fi
fi

if [ "$mode" = decoder ]; then
    echo "=== DecoderBench (vit_b decoder, 1 and 64 prompt sets; overlap)"
    timeout "${BENCH_TIMEOUT:-240}" java -Xmx24g -cp "$cp" io.samstream.bench.DecoderBench "$out/decoder-bench.tsv" \
        2>&1 | tee "$work/decoder-bench.log" || status=1
    if [ -s "$out/decoder-bench.tsv" ]; then
        echo "=== Meta segment-anything prompt encoder + mask decoder (needs .ref/segment_anything on PYTHONPATH)"
        PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-240}" python3 "$here/decoder_torch.py" --java "$out/decoder-bench.tsv" \
            --commit "$(cat "$here/COMMIT")" --out "$out/decoder-table.md" 2>&1 | tee "$work/decoder-torch.log" || status=1
    fi
fi

if [ "$mode" = imageops ] || [ "$mode" = all ]; then
    echo "=== ImageOpsBench (1080p pre- and post-processing, CPU vs GPU)"
    timeout 240 java -Xmx16g -cp "$cp" io.samstream.bench.ImageOpsBench "$out/imageops-bench.tsv" 5 \
        2>&1 | tee "$work/imageops-bench.log" || status=1
fi

if [ "$mode" = track-eval ]; then
    extra=()
    [ -n "${TRACK_EVAL_CONFIG:-}" ] && extra=(--engine-config "$TRACK_EVAL_CONFIG")
    # CUDA first (fast); each run under TRACK_EVAL_TIMEOUT seconds (default 280: both fit one device call).
    for dev in cuda cpu; do
        echo "=== TrackEval ($dev)"
        timeout "${TRACK_EVAL_TIMEOUT:-280}" java -Xmx16g -cp "$cp" io.samstream.bench.TrackEval --device "$dev" \
            --commit "$(cat "$here/COMMIT")" --out "$out/track-eval-$dev.md" "${extra[@]}" \
            > "$work/track-eval-$dev.log" 2>&1 || status=1
        grep -E '^(box|oracle|discovery) |Exception|ERROR|wrote ' "$work/track-eval-$dev.log" | head -40
        [ -s "$out/track-eval-$dev.md" ] && sed -n '/^| \*\*all/p' "$out/track-eval-$dev.md"
    done
    # Issue #6: the same figures on CPU and GPU within 0.02.
    if [ -s "$out/track-eval-cpu.tsv" ] && [ -s "$out/track-eval-cuda.tsv" ]; then
        java -cp "$cp" io.samstream.bench.TrackCompare "$out/track-eval-cpu.tsv" "$out/track-eval-cuda.tsv" \
            --out "$out/track-eval-compare.md" | tail -3 || status=1
    fi
fi

if [ -n "${PROFILE:-}" ]; then
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    IFS=';' read -ra filters <<< "$PROFILE"
    for f in "${filters[@]}"; do
        echo "=== ncu: $f"
        timeout 180 "$ncu" --clock-control none --target-processes all -k regex:samstream_ --launch-skip 3 \
            --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
            --section MemoryWorkloadAnalysis \
            java -Xmx8g -cp "$cp" io.samstream.bench.CudaKernelBench /tmp/ncu-bench.tsv 1 "$f" \
            > "$work/ncu-run.txt" 2>&1
        grep -vE '^==PROF==|^(gemm|attention|layernorm) ' "$work/ncu-run.txt" | grep -vE '^\s*$' \
            | sed -n '/samstream_/,$p' | tee -a "$out/ncu.txt" | head -120
    done
fi

tar czf "$out/reports-$mode.tgz" -C "$work" .
rm -rf "$work"
echo "=== done, status $status; results in $out"
exit $status
