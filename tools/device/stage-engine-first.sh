#!/usr/bin/env bash
# Stages an older build's stream classes for an A/B in one device call: the classes of the stream module's main
# sources that changed between REV and HEAD, as they were at REV, compiled against HEAD's stream classes and
# dependencies into OUT (default .device/sam3video/old-stream). Put OUT first on the class path of a run
# (ENGINE_FIRST=$PWD/OUT in run-sam2-video-bench.sh, and carry OUT) and that run has REV's engine with everything else
# HEAD's. Files REV lacks stay HEAD's; one REV's sources cannot compile against HEAD's is an error naming it.
#
#   ./mvnw -B -q -ntp -o install -DskipTests && bash tools/device/stage-engine-first.sh 6706a600
set -euo pipefail
rev=${1:?usage: stage-engine-first.sh REV [OUT]}
out=${2:-.device/sam3video/old-stream}
cd "$(git rev-parse --show-toplevel)"
git rev-parse --verify --quiet "$rev^{commit}" > /dev/null || { echo "not a commit: $rev" >&2; exit 2; }
[ -d stream/target/classes ] || { echo "build first: ./mvnw -B -q -ntp -o install -DskipTests" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=()
while IFS= read -r f; do
    if git cat-file -e "$rev:$f" 2> /dev/null; then
        mkdir -p "$work/src/$(dirname "$f")"
        git show "$rev:$f" > "$work/src/$f"
        files+=("$work/src/$f")
    fi
done < <(git diff --name-only "$rev" HEAD -- 'stream/src/main/java/*.java')
if [ ${#files[@]} -eq 0 ]; then
    echo "no stream class changed between $rev and HEAD: nothing to stage" >&2
    exit 1
fi
./mvnw -B -q -ntp -o -pl stream dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" > /dev/null
rm -rf "$out" && mkdir -p "$out"
javac -nowarn -d "$out" -cp "stream/target/classes:$(cat "$work/cp.txt")" "${files[@]}" 2>&1 | grep -v '^Note:' || true
[ -n "$(find "$out" -name '*.class' -print -quit)" ] || { echo "$rev's stream sources did not compile against HEAD" >&2; exit 1; }
echo "staged $rev's ${#files[@]} changed stream sources ($(find "$out" -name '*.class' | wc -l) classes) in $out:"
printf '  %s\n' "${files[@]#"$work/src/"}"
