#!/usr/bin/env bash
# Style and static checks, each a tool reading a file of the tree (a stage of scripts/test.sh):
#   format      scripts/format.sh --check: clang-format (.clang-format), ruff's import order and
#               formatter (pyproject.toml [tool.ruff]); scripts/format.sh fixes what it reports
#   ruff        `ruff check`: pyflakes, pycodestyle, bugbear (pyproject.toml [tool.ruff.lint])
#   mypy        the typed Python: ferry.tschema and ferry.cpp (pyproject.toml [tool.mypy])
#               (user-style code, a tschema-generated module and the docs' Python blocks are
#               checked strict by tests/python/test_typing.py, tests/python/typing/mypy.ini)
#   clang-tidy  the checks of .clang-tidy on src/ and, through them, include/ferry/, with the
#               compile commands of a configured (not built) clang tree in build-lint/
# Any finding fails the run. The tools: scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

echo "lint: format"
scripts/format.sh --check
echo "lint: ruff check"
python3 -m ruff check --quiet .
echo "lint: mypy"
python3 -m mypy
echo "lint: clang-tidy"
major=$(clang++ -dumpversion | cut -d. -f1)
clang_tidy=clang-tidy
command -v "clang-tidy-$major" >/dev/null 2>&1 && clang_tidy="clang-tidy-$major"
cmake -S . -B build-lint -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_EXAMPLES=OFF \
  -DFERRY_BUILD_PYTHON=OFF >/dev/null
git ls-files 'src/*.cc' | xargs -P "$jobs" -n 1 "$clang_tidy" -p build-lint --quiet
echo "lint: passed"
