#!/usr/bin/env bash
# Compiles the CUDA kernels of the gpu module into one fatbin, the resource that
# io.samstream.gpu.cuda.CudaKernels loads with cuModuleLoadData. Called by the gpu module's build
# (exec-maven-plugin, phase process-resources); can be run by hand:
#
#   gpu/src/main/cuda/build-fatbin.sh SRC_DIR OUT_FATBIN [build|skip]
#
# Next to the fatbin it writes the kernel table, OUT_FATBIN with .tsv for .fatbin: the ABI version, every
# entry point, and the dynamic shared memory each fixed-size one is built for (the samstream_smem_*
# constants of samstream_kernels.cu), read from the PTX the compile keeps. KernelTableTest checks the Java
# launchers against it without a GPU; where it is missing (no nvcc), those tests skip and say why.
#
# Targets: machine code for sm_80 (A100; the same cubin runs on sm_86 RTX 30xx / A10 and sm_89
# RTX 40xx / L4: compute capability 8.x is binary compatible upwards, and the kernels use nothing
# of 8.6/8.9), sm_90a (H100 / H200, the arch-specific variant that allows wgmma, which no other
# target runs) and PTX for compute_80, which the driver compiles at load time on anything newer
# (Blackwell). Two machine-code targets instead of four halve the compile (about 1 min on 2 cores).
#
# The third argument (Maven: -Dsamstream.cuda.kernels=skip|build, default build) skips the compile on
# purpose: the ./samstream launcher does so on a machine without an NVIDIA GPU, where no kernel
# could run. Docker and tools/device build with the default, so their jars carry the kernels.
#
# nvcc is looked up in $NVCC, then PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, /usr/local/cuda-*/bin.
# Without one the build still succeeds: it prints one line and leaves no fatbin, and at run time the
# CUDA backend reports "this build has no CUDA kernels". SAMSTREAM_SKIP_CUDA=1 skips the compile on
# purpose. The compile is skipped when the fatbin is newer than every source (incremental builds).
# nvcc compiles the targets in parallel (--threads 0: one per target, bounded by the cores).
set -euo pipefail

src=${1:?usage: build-fatbin.sh SRC_DIR OUT_FATBIN [build|skip]}
out=${2:?usage: build-fatbin.sh SRC_DIR OUT_FATBIN [build|skip]}
mode=${3:-build}
table="${out%.fatbin}.tsv"
case "$mode" in
    build|skip) ;;
    *) echo "[samstream] samstream.cuda.kernels must be build or skip, got '$mode'" >&2; exit 1 ;;
esac

if [ "${SAMSTREAM_SKIP_CUDA:-0}" = "1" ] || [ "$mode" = "skip" ]; then
    why="samstream.cuda.kernels=skip"
    [ "${SAMSTREAM_SKIP_CUDA:-0}" = "1" ] && why="SAMSTREAM_SKIP_CUDA=1"
    echo "[samstream] building without CUDA kernels ($why); the CUDA backend will report that this build has none"
    rm -f "$out" "$table"
    exit 0
fi

find_nvcc() {
    if [ -n "${NVCC:-}" ] && [ -x "$NVCC" ]; then echo "$NVCC"; return; fi
    if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
    local d
    for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda $(ls -d /usr/local/cuda-* 2>/dev/null | sort -V -r); do
        if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then echo "$d/bin/nvcc"; return; fi
    done
}

nvcc=$(find_nvcc || true)
if [ -z "$nvcc" ]; then
    echo "[samstream] nvcc not found (PATH, CUDA_HOME, /usr/local/cuda*): building without CUDA kernels; the CUDA backend will report that this build has none"
    rm -f "$out" "$table"
    exit 0
fi

# Up to date? (both outputs newer than every .cu / .cuh and than this script)
if [ -s "$out" ] && [ -s "$table" ] && [ ! "$table" -ot "$out" ]; then
    newer=$(find "$src" -maxdepth 1 \( -name '*.cu' -o -name '*.cuh' -o -name '*.sh' \) -newer "$out" | head -1)
    if [ -z "$newer" ]; then
        echo "[samstream] CUDA kernels up to date: $out"
        exit 0
    fi
fi

mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
keep=$(mktemp -d "${TMPDIR:-/tmp}/samstream-nvcc.XXXXXX")   # the compile's intermediate files (the PTX)
trap 'rm -rf "$tmp" "$table.tmp.$$" "$keep"' EXIT
start=$(date +%s)
echo "[samstream] compiling the CUDA kernels with $nvcc: sm_80, sm_90a + compute_80 PTX, in parallel (about 1 min on 2 cores; once, then only when a .cu/.cuh changes) ..."

# -Xfatbin=-compress-all: the driver inflates at load; 5x smaller jar. SAMSTREAM_CUDA_LINEINFO=1 adds
# source line tables for ncu / compute-sanitizer (3.5x larger fatbin).
lineinfo=""
[ "${SAMSTREAM_CUDA_LINEINFO:-0}" = "1" ] && lineinfo="-lineinfo"
"$nvcc" -fatbin -std=c++17 -O3 $lineinfo -Xfatbin=-compress-all --threads 0 -keep -keep-dir "$keep" \
    -gencode=arch=compute_80,code=sm_80 \
    -gencode=arch=compute_90a,code=sm_90a \
    -gencode=arch=compute_80,code=compute_80 \
    -o "$tmp" "$src/samstream_kernels.cu"

# The kernel table, from the compute_80 PTX (every entry point is there, with a trapping body where a kernel is
# sm_90a's): "abi" and its version, then "entry", name and the dynamic shared memory it is built for ("-": none
# fixed). A constant naming no entry point fails the build.
ptx=$(ls "$keep"/*.compute_80.ptx 2>/dev/null | head -1)
if [ -z "$ptx" ]; then
    echo "[samstream] the compile kept no compute_80 PTX in $keep: cannot write the kernel table" >&2
    exit 1
fi
awk -v nvcc_version="$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')" '
    /^([.]visible[ \t]+)?[.]entry[ \t]/ {
        name = $0; sub(/^.*[.]entry[ \t]+/, "", name); sub(/[ \t]*\(.*$/, "", name)
        entries[++n] = name; known[name] = 1
    }
    /^([.]visible[ \t]+)?[.]global[ \t].*[ \t]samstream_kernels_abi[ \t]*=/ {
        abi = $0; sub(/^.*=[ \t]*/, "", abi); sub(/[ \t]*;.*$/, "", abi)
    }
    /^([.]visible[ \t]+)?[.]global[ \t].*[ \t]samstream_smem_[A-Za-z0-9_]+[ \t]*=/ {
        name = $0; sub(/^.*[ \t]samstream_smem_/, "", name); sub(/[ \t]*=.*$/, "", name)
        bytes = $0; sub(/^.*=[ \t]*/, "", bytes); sub(/[ \t]*;.*$/, "", bytes)
        smem[name] = bytes
    }
    END {
        if (abi == "" || n == 0) { print "no entry points or no samstream_kernels_abi in the PTX" > "/dev/stderr"; exit 1 }
        for (name in smem) if (!(name in known)) { print "samstream_smem_" name " names no entry point" > "/dev/stderr"; exit 1 }
        print "# samstream_kernels.fatbin: its entry points and the dynamic shared memory (bytes) each is built for"
        print "# (\"-\": none fixed). Written by build-fatbin.sh from the PTX of nvcc " nvcc_version "; do not edit."
        print "abi\t" abi
        for (i = 1; i <= n; i++) print "entry\t" entries[i] "\t" ((entries[i] in smem) ? smem[entries[i]] : "-")
    }' "$ptx" > "$table.tmp.$$"
mv "$tmp" "$out"
mv "$table.tmp.$$" "$table"
version=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
echo "[samstream] CUDA kernels: nvcc $version, sm_80/90a + compute_80 PTX, $(( $(date +%s) - start )) s -> $out ($(wc -c <"$out") bytes); kernel table $table ($(grep -c '^entry' "$table") entry points)"
