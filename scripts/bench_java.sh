#!/usr/bin/env bash
# Runs bench/java/CallBench.java (the Java frontend's call, callback and field-read paths beside
# their plain-Java, FFM and C++ floors; docs/benchmarks.md "Java"). Builds java/ (without its
# tests) and the tests' libdemo.so first, against build/'s libferry. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=$(scripts/java.sh --find-jdk)
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
build=${FERRY_BUILD_DIR:-$PWD/build}
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
(cd java && mvn -B -q -ntp test-compile -Dferry.library.path="$build")
demo=java/target/ferry-demo/libdemo.so
if [ ! -f "$demo" ] || [ rust/ferry/tests/demo/demo.cc -nt "$demo" ]; then
  mkdir -p java/target/ferry-demo
  c++ -std=c++17 -shared -fPIC -O1 -pthread -Iinclude rust/ferry/tests/demo/demo.cc \
    -L"$build" -Wl,-rpath,"$build" -lferry -o "$demo"
fi
out=java/target/bench
mkdir -p "$out"
javac -Xlint:all -Werror -d "$out" -cp java/target/classes bench/java/CallBench.java
java --enable-native-access=ALL-UNNAMED -Dferry.library.path="$build" \
  -cp "java/target/classes:$out" CallBench "$PWD/$demo" "$@"
