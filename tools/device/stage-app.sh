#!/usr/bin/env bash
# Stages the whole application for the GPU machine: the shaded CLI jar's classes (samstream.jar, ~80 MB
# as a jar), the bench module's classes, the connectors' test classes and the JUnit console, as one
# xz-compressed tar (~50 MB), split in two halves, .device/app1/part-00 and .device/app2/part-01. With the JRE
# (18 MB) and the tracked tree (~37 MB) that is more than the device tool carries in one call (64 MiB), so a run
# takes three calls on the same warm machine (it stays warm ~30 s after a call, keeping ignored files):
#
#   1. carry [".device/app1"], command:  mkdir -p .device/parts && cp .device/app1/part-00 .device/parts/
#   2. (right after) carry [".device/app2"], command:
#        rm -rf .device/stage && mkdir -p .device/stage &&
#        cat .device/parts/part-00 .device/app2/part-01 | tar xJ -C .device/stage && cat .device/stage/COMMIT
#   3. (right after) carry [".device/jre.tar.xz", ".device/stage-scripts"] (+ ".device/gputests", ".ref" when the
#      modes need them and the total allows), command:
#        tar xJf .device/jre.tar.xz -C /tmp && export PATH=/tmp/jre/bin:$PATH &&
#        bash .device/stage-scripts/run-app.sh 2>&1 | tee $OUT/log.txt
#
#   tools/device/stage-app.sh            (builds the jars first when needed)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
mvn -B -q -ntp -DskipTests package
# Test classes of connectors (the NVDEC test) and stream (the CUDA engine test) without running them.
mvn -B -q -ntp -pl connectors,stream -am test-compile
console_version=$(sed -n 's:.*<junit-console.version>\(.*\)</junit-console.version>.*:\1:p' pom.xml)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/app" "$work/bench" "$work/connectors-tests" "$work/stream-tests" "$work/lib"
(cd "$work/app" && unzip -q "$repo/stream/target/samstream.jar")
(cd "$work/bench" && unzip -q "$repo"/bench/target/samstream-bench-*.jar -x 'META-INF/*')
cp -r connectors/target/test-classes/. "$work/connectors-tests/"
# With the testkit classes (fixtures, clips) that the stream tests use.
cp -r stream/target/test-classes/. testkit/target/classes/. testkit/connectors/target/classes/. "$work/stream-tests/"
mvn -B -q -ntp dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:$console_version" \
    -DoutputDirectory="$work/lib"
commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD || commit="$commit+dirty"
echo "$commit" > "$work/COMMIT"

# The GPU tests (run-gpu-tests.sh with the application's classes): test classes and reference fixtures,
# carried in the second call.
g=.device/gputests
rm -rf "$g" && mkdir -p "$g/test-classes" "$g/fixtures"
mvn -B -q -ntp -pl gpu -am test-compile
(cd gpu/target/test-classes && find io/samstream/gpu -name '*.class' -exec cp --parents {} "$repo/$g/test-classes/" \;)
cp -r testkit/target/classes/. "$repo/$g/test-classes/"
fx=gpu/src/test/resources/fixtures
cp "$fx/manifest.json" "$g/fixtures/"
for cfg in tiny256 small1024; do
    mkdir -p "$g/fixtures/$cfg"
    cp "$fx/$cfg/model.pth" "$g/fixtures/$cfg/"
    for d in "$fx/$cfg"/*/; do
        case "$(basename "$d")" in hf) ;; *) cp -r "$d" "$g/fixtures/$cfg/" ;; esac
    done
done
# SAM 2's tiny fixtures (1.9 MB): the CUDA SAM 2 parts against the CPU reference and Meta's predictor.
mkdir -p "$g/fixtures/sam2"
cp -r "$fx/sam2/tiny" "$fx/sam2/tiny_absent" "$g/fixtures/sam2/"
cp tools/device/run-gpu-tests.sh bench/torch_kernels.py bench/encoder_torch.py bench/decoder_torch.py "$g/"
echo "$commit" > "$g/COMMIT"

mkdir -p .device/app .device/stage-scripts
tar cf - -C "$work" . | xz -6 -T0 > .device/app/app.tar.xz
rm -rf .device/app1 .device/app2 && mkdir -p .device/app1 .device/app2
split -n 2 -d .device/app/app.tar.xz .device/app/part-
mv .device/app/part-00 .device/app1/ && mv .device/app/part-01 .device/app2/
cp tools/device/run-app.sh bench/encoder_torch.py .device/stage-scripts/ 2>/dev/null || true
# The jlink'ed JRE's JPEG encoder (the console's previews, StreamBench --viewers) links libjpeg.so.62, which the GPU
# machine lacks: it travels along (600 KB) and run-app.sh puts it on LD_LIBRARY_PATH.
mkdir -p .device/stage-scripts/native
cp -L /usr/lib/x86_64-linux-gnu/libjpeg.so.62 .device/stage-scripts/native/ 2>/dev/null \
    || echo "no libjpeg.so.62 here: previews on the GPU machine will fail to encode" >&2
grep -qxF '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude
echo "staged $(du -h .device/app/app.tar.xz | cut -f1) (commit $commit)"
