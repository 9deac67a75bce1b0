#!/usr/bin/env bash
# Builds one commit twice, in two fresh clones at different paths, and checks that every jar the build
# makes (each module's jar, the shaded stream/target/samstream.jar, the gpu jar with its CUDA fatbin
# when nvcc is there) is byte-identical between the two. Not part of CI: it doubles the build.
#
#   tools/check-reproducible.sh [COMMIT]        (default HEAD; uncommitted changes are not built)
#
# Exit status 0 when every jar matches; 1 with the differing jars and, for each, the entries that
# differ (names, or contents) when they do not. KEEP=1 keeps the two clones (their path is printed).
# MVN_ARGS adds Maven options to both builds (e.g. MVN_ARGS=-o, or -Dsamstream.cuda.kernels=skip).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
commit="$(git -C "$root" rev-parse --verify "${1:-HEAD}^{commit}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/samstream-repro.XXXXXX")"
if [[ "${KEEP:-0}" != 1 ]]; then
  trap 'rm -rf "$work"' EXIT
fi

build() {
  local dir="$1"
  git clone -q --no-checkout "$root" "$dir"
  git -C "$dir" checkout -q --detach "$commit"
  echo "check-reproducible: building $commit in $dir ..." >&2
  # shellcheck disable=SC2086
  (cd "$dir" && ./mvnw -B -ntp -q -DskipTests ${MVN_ARGS:-} package) >"$dir.log" 2>&1 \
    || { tail -40 "$dir.log" >&2; echo "check-reproducible: the build in $dir failed (log: $dir.log)" >&2; exit 2; }
}

# Different paths (and lengths of them) on purpose: a path that leaks into a jar shows up.
build "$work/a"
build "$work/second-clone"

jars() { (cd "$1" && find . -path '*/target/*.jar' -not -path '*/target/*/*' | sort); }
if [[ "$(jars "$work/a")" != "$(jars "$work/second-clone")" ]]; then
  echo "check-reproducible: the two builds made different sets of jars:" >&2
  diff <(jars "$work/a") <(jars "$work/second-clone") >&2 || true
  exit 1
fi

# Lists the entries of two jars that differ in name or content (the jars are zip files).
entry_diff() {
  python3 - "$1" "$2" <<'EOF'
import sys, zipfile
a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
na, nb = a.namelist(), b.namelist()
if na != nb:
    print("    entry names or order differ:", sorted(set(na) ^ set(nb))[:20] or "(same names, other order)")
for info in a.infolist():
    if info.filename in nb:
        other = b.getinfo(info.filename)
        if a.read(info) != b.read(other):
            print("    content differs:", info.filename)
        elif info.date_time != other.date_time or info.external_attr != other.external_attr:
            print("    time or mode differs:", info.filename, info.date_time, other.date_time)
EOF
}

status=0
count=0
while read -r jar; do
  count=$((count + 1))
  sum_a="$(sha256sum < "$work/a/$jar" | cut -d' ' -f1)"
  sum_b="$(sha256sum < "$work/second-clone/$jar" | cut -d' ' -f1)"
  if [[ "$sum_a" == "$sum_b" ]]; then
    extra=""
    entries="$(unzip -Z1 "$work/a/$jar")"
    if [[ "$entries" == *samstream_kernels.fatbin* ]]; then
      extra=" (with the CUDA fatbin)"
    fi
    echo "same      $sum_a  ${jar#./}$extra"
  else
    echo "DIFFERENT ${jar#./}"
    entry_diff "$work/a/$jar" "$work/second-clone/$jar"
    status=1
  fi
done < <(jars "$work/a")

if [[ $count -eq 0 ]]; then
  echo "check-reproducible: the build made no jar" >&2
  exit 2
fi
if [[ $status -eq 0 ]]; then
  echo "check-reproducible: all $count jars of $commit are byte-identical across two builds"
else
  echo "check-reproducible: some jars of $commit differ between two builds" >&2
fi
[[ "${KEEP:-0}" == 1 ]] && echo "check-reproducible: clones kept in $work" >&2
exit $status
