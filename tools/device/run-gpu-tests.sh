#!/usr/bin/env bash
# Runs on the GPU machine (no Java, no network there): the CUDA tests of the gpu module, then the kernel
# benchmark and PyTorch's numbers on the same shapes. Prepared here by tools/device/prepare-gpu-tests.sh,
# which copies this script to .device/cuda/ with the classes and jars; start it from the root of the
# tree the device tool sent:
#
#   tar xJf .device/jre.tar.xz -C /tmp && export PATH=/tmp/jre/bin:$PATH && set -o pipefail &&
#   bash .device/cuda/run-gpu-tests.sh [tests|bench|all] 2>&1 | tee $OUT/log.txt
#
# Each GPU test class runs in its own JVM (a kernel fault poisons its CUDA context; the next class still
# gets a clean one), under a time limit. Results, in $OUT (default .device/cuda/out):
#   reports.tgz    JUnit XML per class, the per-class logs, nvidia-smi
#   cuda-bench.tsv samstream's kernel timings (io.samstream.bench.CudaKernelBench)
#   bench-table.md samstream next to PyTorch (bench/torch_kernels.py): copy it to bench/results/
# SANITIZE=1 runs the test classes under compute-sanitizer (memcheck), much slower.
# PROFILE="filter;filter..." also profiles one launch of each matching benchmark kernel with Nsight
# Compute (speed of light, occupancy, warp stall reasons), e.g.
#   PROFILE="attention vit_b global;gemm qkv bias T128x128x64" (filters as in CudaKernelBench)
# and writes the reports to ncu.txt.
# Exit status: non-zero when a test class failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mode=${1:-all}
mkdir -p "$out"
work=$(mktemp -d)
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv > "$work/nvidia-smi.txt" 2>&1 || true
cat "$work/nvidia-smi.txt"
java -version 2>&1 | head -1
# If JCuda's native library cannot load, say which shared library is missing.
(cd "$work" && unzip -q -o "$here"/lib/jcuda-natives-*.jar 'lib/libJCudaDriver*' 2>/dev/null &&
    ldd lib/libJCudaDriver*.so | grep -i 'not found') || true

cp="$here/test-classes"
for j in "$here"/lib/*.jar; do
    case "$j" in *junit-platform-console-standalone*) ;; *) cp="$cp:$j" ;; esac
done
console=$(ls "$here"/lib/junit-platform-console-standalone-*.jar)

if [ "$mode" = tests ] || [ "$mode" = all ]; then
    for cls in CudaAvailabilityTest CudaRuntimeGpuTest LayerNormGpuTest GemmGpuTest AttentionGpuTest; do
        echo "=== $cls"
        start=$(date +%s)
        prefix=()
        [ "${SANITIZE:-0}" = 1 ] && prefix=(compute-sanitizer --tool memcheck --print-limit 20)
        timeout 300 "${prefix[@]}" java -Xmx24g -jar "$console" execute --disable-banner --disable-ansi-colors --details=tree \
            --class-path "$cp" --select-class "io.samstream.gpu.cuda.$cls" \
            --reports-dir "$work/junit-$cls" > "$work/$cls.log" 2>&1
        rc=$?
        # The tree with the failures' messages; the full log is in reports.tgz.
        grep -vE '^\s+at |^\s+\.\.\. [0-9]+ more' "$work/$cls.log" | tail -60
        echo "=== $cls: exit $rc, $(( $(date +%s) - start )) s"
        [ $rc -ne 0 ] && status=1
        # On the GPU machine a skipped (aborted) test means the GPU was not usable: count it as a failure.
        if grep -qE '\[ +[1-9][0-9]* tests aborted' "$work/$cls.log"; then
            echo "!!! $cls: tests were skipped on the GPU machine: $(grep -m1 -o 'GPU tests skipped: .*' "$work/$cls.log")"
            status=1
        fi
    done
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

tar czf "$out/reports.tgz" -C "$work" .
rm -rf "$work"
echo "=== done, status $status; results in $out"
exit $status
