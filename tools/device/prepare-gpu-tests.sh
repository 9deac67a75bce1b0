#!/usr/bin/env bash
# Builds the gpu and bench modules here and copies what the GPU machine needs to run the GPU tests and
# the kernel and encoder benchmarks into DEST/.device/cuda (or DEST/.device/$DEVICE_DIR) (DEST: the checkout that the device tool sends; by default
# this one). The GPU machine has no Java and no network, so this also makes DEST/.device/jre.tar.xz (a
# jlink'ed runtime) once. .device/ is kept out of git through DEST's .git/info/exclude.
#
#   tools/device/prepare-gpu-tests.sh [DEST]          e.g. tools/device/prepare-gpu-tests.sh /work/main
#   GPU_ONLY=1 DEVICE_DIR=sparse tools/device/prepare-gpu-tests.sh /work/main   (run-gpu-tests.sh sparse: ~14 MB)
#
# Mode "track-eval" of run-gpu-tests.sh runs the tracking benchmark (io.samstream.bench.TrackEval) on the
# CPU and on CUDA; the demo model is part of the tree, and it needs neither the fixtures nor the test
# classes, so carry only [".device/jre.tar.xz", ".device/NAME/lib", ".device/NAME/run-gpu-tests.sh",
# ".device/NAME/COMMIT"] (~45 MB; lib is ~26 MB since bench brings the engine's Akka and Scala).
# Then call the device tool with carry [".device"] and the command
#   tar xJf .device/jre.tar.xz -C /tmp && export PATH=/tmp/jre/bin:$PATH && set -o pipefail &&
#   bash .device/cuda/run-gpu-tests.sh 2>&1 | tee $OUT/log.txt
# (see run-gpu-tests.sh for what comes back). For the encoder run (mode "encoder": its tests, then the vit_b
# encoder next to Meta's bf16 eager one) also carry ".ref" (Meta's segment_anything source, git-ignored) and
# export PYTHONPATH=$PWD/.ref; when other .device/ folders would push the tree over the device tool's limit,
# stage with DEVICE_DIR=NAME and carry [".device/jre.tar.xz", ".device/NAME", ".ref"] only. What travels is ~20 MB: class files, the dependency
# jars the tests and the benchmark use (linux-x86_64 JCuda natives only), the JUnit console launcher.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(cd "${1:-$repo}" && pwd)
out="$dest/.device/${DEVICE_DIR:-cuda}"

exclude=$(git -C "$dest" rev-parse --git-path info/exclude)
case "$exclude" in /*) ;; *) exclude="$dest/$exclude" ;; esac
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.device/' "$exclude" 2>/dev/null || echo '/.device/' >> "$exclude"

cd "$repo"
echo "building gpu + bench in $repo"
rm -rf "$out"
mkdir -p "$out/lib" "$out/test-classes"
# Package, and copy the modules' runtime + test dependencies (JUnit itself comes with the console launcher).
mvn -B -q -pl gpu,bench -am package dependency:copy-dependencies -DskipTests -DincludeScope=test \
    -DoutputDirectory="$out/lib" -DexcludeGroupIds=io.samstream,org.junit.jupiter,org.junit.platform,org.opentest4j,org.apiguardian
if [ ! -s gpu/target/classes/io/samstream/gpu/cuda/samstream_kernels.fatbin ]; then
    echo "no fatbin was built (nvcc missing?): the GPU tests would only skip" >&2
    exit 1
fi

# bench depends on stream (StreamBench, TrackEval), whose dependencies came along. Nothing run on the GPU
# machine needs FFmpeg or a Kafka broker (TrackEval feeds frames from memory and keeps masks in memory;
# StreamBench, which needs both, is not staged here), and tree + carry must stay under the device tool's
# 64 MiB: drop them (~70 MB), and JCuda's 24 MB PTX-compiler library, which nothing loads (our kernels
# are compiled here by nvcc and loaded through the driver API).
for j in "$out"/lib/*.jar; do
    case "$(basename "$j")" in
        ffmpeg-* | javacpp-* | kafka* | zstd-jni-* | snappy-java-* | lz4-java-* | scala-reflect-* | log4j-* | \
        caffeine-* | commons-* | argparse4j-* | jopt-simple-* | jose4j-* | metrics-core-* | pcollections-* | \
        re2j-* | hash4j-* | jackson-dataformat-* | snakeyaml-* | scala-logging_* | scala-parser-combinators_* | \
        akka-protobuf-* | picocli-* | prometheus-metrics-exposition-formats-* | jazzer-*) rm "$j" ;;
    esac
done
# GPU_ONLY=1 (for modes that run only the gpu module's tests and the kernel / encoder / SAM 2 benchmarks, e.g.
# run-gpu-tests.sh sparse): also drop the engine's Akka and Scala (~16 MB), its metrics and logging jars and the
# engine's own modules (~2 MB), and the parity fixtures (~5 MB), so that /work/main's tree + the JRE + this folder
# stay under the device tool's 64 MiB. FIXTURES=1 keeps the fixtures all the same (mode encoder: GPU_ONLY=1
# FIXTURES=1 DEVICE_DIR=encoder, ~20 MB, carried with .ref).
if [ "${GPU_ONLY:-0}" = 1 ]; then
    rm -f "$out"/lib/akka-*.jar "$out"/lib/scala-*.jar "$out"/lib/ssl-config-*.jar "$out"/lib/micrometer-*.jar \
        "$out"/lib/prometheus-metrics-*.jar "$out"/lib/HdrHistogram-*.jar "$out"/lib/logback-*.jar
fi
natives=$(ls "$out"/lib/jcuda-natives-*.jar)
slim=$(mktemp -d)
(cd "$slim" && unzip -q "$natives" && rm -f lib/libJNvPTXCompiler* && rm "$natives" && zip -q -r "$natives" .)
rm -rf "$slim"
# The testkit too: the GPU tests find their fixtures through it (Fixtures, -Dsamstream.fixtures).
cp gpu/target/samstream-gpu-*.jar bench/target/samstream-bench-*.jar config/target/samstream-config-*.jar \
    testkit/target/samstream-testkit-*.jar "$out/lib/"
if [ "${GPU_ONLY:-0}" != 1 ]; then
    cp connectors/target/samstream-connectors-*.jar stream/target/samstream-stream-*.jar "$out/lib/"
fi
console_version=$(sed -n 's:.*<junit-console.version>\(.*\)</junit-console.version>.*:\1:p' pom.xml)
mvn -B -q dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:$console_version" \
    -DoutputDirectory="$out/lib"
# The GPU test classes and what they use: the cuda package, the CUDA parity test with the reference
# fixtures it reads (models and cases of tiny256 / small1024, ~6 MB), the random-weights helper.
(cd gpu/target/test-classes && find io/samstream/gpu/cuda io/samstream/gpu/parity io/samstream/gpu/model io/samstream/gpu/sam2 \
    io/samstream/gpu/sam3 -name '*.class' -exec cp --parents {} "$out/test-classes/" \;)
fx=gpu/src/test/resources/fixtures
mkdir -p "$out/fixtures"
cp "$fx/manifest.json" "$out/fixtures/"
fixtures=${FIXTURES:-$([ "${GPU_ONLY:-0}" = 1 ] && echo 0 || echo 1)}
for cfg in $([ "$fixtures" = 1 ] && echo tiny256 small1024); do
    mkdir -p "$out/fixtures/$cfg"
    cp "$fx/$cfg/model.pth" "$out/fixtures/$cfg/"
    for d in "$fx/$cfg"/*/; do
        case "$(basename "$d")" in hf) ;; *) cp -r "$d" "$out/fixtures/$cfg/" ;; esac
    done
done

# SAM 2's tiny fixtures (1.9 MB): the CUDA SAM 2 parts against the CPU reference and Meta's predictor.
mkdir -p "$out/fixtures/sam2"
cp -r "$fx/sam2/tiny" "$fx/sam2/tiny_absent" "$out/fixtures/sam2/"

# SAM 3's tiny fixture, all of it (~2 MB): the checkpoint, the model input and Meta's outputs of every image part
# (trunk, necks, fusion memory, decoder queries / boxes / presence, masks) that the cuda.sam3 GPU tests compare with.
mkdir -p "$out/fixtures/sam3"
cp -r "$fx/sam3/tiny" "$out/fixtures/sam3/"

cp tools/device/run-gpu-tests.sh bench/torch_kernels.py bench/encoder_torch.py bench/decoder_torch.py bench/sparse_table.py bench/bench_tsv.py "$out/"
commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD -- gpu bench tools pom.xml || commit="$commit+dirty"
echo "$commit" > "$out/COMMIT"

if [ ! -s "$dest/.device/jre.tar.xz" ]; then
    echo "making $dest/.device/jre.tar.xz (jlink)"
    tmp=$(mktemp -d)
    jlink --add-modules java.se,jdk.unsupported,jdk.crypto.ec,jdk.zipfs,jdk.management \
        --strip-debug --no-man-pages --no-header-files --output "$tmp/jre"
    tar cf - -C "$tmp" jre | xz -6 -T0 > "$dest/.device/jre.tar.xz"
    rm -rf "$tmp"
fi
echo "ready: $(du -sh "$dest/.device" | cut -f1) in $dest/.device (commit $commit)"
du -sh "$out"/* | sort -h | tail -5
