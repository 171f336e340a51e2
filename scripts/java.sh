#!/usr/bin/env bash
# Builds and tests the Java frontend (java/, Maven project dev.ferry:ferry) against the libferry
# of build/ (scripts/test.sh's build stage): javac -Xlint:all -Werror, then the JUnit tests
# through Surefire (the DESIGN contract program, calls, callbacks, leaks, threads; the tests
# build rust/ferry/tests/demo/demo.cc into java/target/ferry-demo/libdemo.so with c++).
#
#   scripts/java.sh              build and test
#   scripts/java.sh --find-jdk   print the JDK it would use (exit 1 when there is none)
#
# The JDK: FERRY_JAVA_HOME, else JAVA_HOME, else the newest /usr/lib/jvm/* — the first whose
# version is 22 or later (the FFM API is final since 22; the machines' default JDK is 17, and
# they carry a Temurin JDK 25 beside it). Maven's downloads stay in ~/.m2 (plugins and JUnit,
# once per machine). FERRY_BUILD_DIR overrides build/.
set -euo pipefail
cd "$(dirname "$0")/.."

jdk_version() {  # the feature version of the JDK at $1 (0 when it is no JDK with javac)
  local release="$1/release" v
  [ -x "$1/bin/javac" ] && [ -f "$release" ] || { echo 0; return; }
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release")
  echo "${v:-0}"
}

find_jdk() {
  local candidate best="" best_version=0 v
  for candidate in "${FERRY_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
    if [ -n "$candidate" ] && [ "$(jdk_version "$candidate")" -ge 22 ]; then
      echo "$candidate"
      return 0
    fi
  done
  for candidate in /usr/lib/jvm/*/; do
    candidate=${candidate%/}
    [ -L "$candidate" ] && continue
    v=$(jdk_version "$candidate")
    if [ "$v" -ge 22 ] && [ "$v" -gt "$best_version" ]; then
      best=$candidate
      best_version=$v
    fi
  done
  [ -n "$best" ] || return 1
  echo "$best"
}

if [ "${1:-}" = --find-jdk ]; then
  find_jdk
  exit $?
fi

if ! JAVA_HOME=$(find_jdk); then
  echo "java.sh: no JDK 22 or later (looked at FERRY_JAVA_HOME, JAVA_HOME, /usr/lib/jvm/*);" \
    "Debian bookworm's apt offers only openjdk-17: install a Temurin/OpenJDK 22+ and set" \
    "FERRY_JAVA_HOME to it" >&2
  exit 1
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
build=${FERRY_BUILD_DIR:-$PWD/build}
if [ ! -f "$build/libferry.so" ]; then
  echo "java.sh: no libferry.so in $build: build it first (cmake --build build --target ferry)" >&2
  exit 1
fi
echo "java.sh: JDK $JAVA_HOME, libferry $build/libferry.so"
# Maven itself (3.8 from Debian) on JDK 25 warns about its own use of sun.misc.Unsafe.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
cd java
mvn -B -ntp test -Dferry.library.path="$build" | grep -v -E '^\[INFO\] (Download|---|$)|^\[INFO\] *$'
exit "${PIPESTATUS[0]}"
