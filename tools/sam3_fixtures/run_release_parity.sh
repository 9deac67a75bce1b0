#!/usr/bin/env bash
# Runs Sam3ReferenceParityTest#releaseShapesMatchMeta against a release-shapes fixture folder (made by
# run_on_device.sh, not committed) in a JVM with a 14 GB heap: the release weights (~800M values, regenerated
# from keys.txt) and their packed copies do not fit surefire's 4 GB. Needs Maven Central once for the JUnit
# console launcher. About 5-10 minutes on 2 cores.
#
#   tools/sam3_fixtures/run_release_parity.sh /path/to/sam3/release
set -euo pipefail
fixture=$(cd "${1:?usage: run_release_parity.sh <release fixture folder>}" && pwd)
work=$(mktemp -d)
# one reactor build, so that config and testkit resolve to their target/classes (gpu comes last and writes cp.txt)
mvn -B -q -ntp -o -pl gpu -am test-compile dependency:build-classpath -DskipTests -Dmdep.outputFile="$work/cp.txt" \
    -Dmdep.includeScope=test
version=$(sed -n 's:.*<junit-console.version>\(.*\)</junit-console.version>.*:\1:p' pom.xml)
mvn -B -q -ntp -o dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:$version" \
    -DoutputDirectory="$work"
cd gpu
java -Xmx14g -Dsamstream.fixtures.sam3Release="$fixture" -jar "$work"/junit-platform-console-standalone-*.jar \
    execute -cp "target/test-classes:target/classes:$(cat "$work/cp.txt")" \
    --select-method io.samstream.gpu.sam3.Sam3ReferenceParityTest#releaseShapesMatchMeta --details=verbose
