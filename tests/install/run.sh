#!/usr/bin/env bash
# Install test: installs the build tree into a temporary prefix, checks that the installed REPL
# runs and that the installed CMake package names no build paths and no LLVM, then configures, builds and runs the downstream
# project in this folder against it.
#   usage: tests/install/run.sh <build-dir> <source-dir> [c++ compiler]
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
cxx=${3:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/arrayc-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "== cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" || {
  cat "$work/install.log"; exit 1; }

# Where the library and the package went: lib/ or, for a /usr prefix, lib/<multiarch>/.
lib=$(find "$prefix" -name 'libarrayc.so' | head -n1)
package_dir=$(find "$prefix" -path '*/cmake/arrayc' -type d | head -n1)
for f in "$prefix/include/arrayc/arrayc.h" "$lib" "$package_dir/arrayc-config.cmake"; do
  [[ -n "$f" && -e "$f" ]] || { echo "missing from the install: ${f:-libarrayc.so or cmake/arrayc}" >&2; exit 1; }
done

# The installed REPL runs from the prefix (it finds libarrayc.so through its RPATH).
echo "== $prefix/bin/arrayc"
repl_out=$("$prefix/bin/arrayc" -c 'sum(arange(4))')
[[ "$repl_out" == "6 : int64[]" ]] || { echo "installed arrayc printed '$repl_out', not '6 : int64[]'" >&2; exit 1; }

# The exported package must not point back into the build or source tree, nor need LLVM.
if grep -n -e "$build_dir" -e "$source_dir" "$package_dir"/*.cmake; then
  echo "the installed CMake package refers to the build or source tree" >&2; exit 1
fi
if grep -n -i -e 'llvm' "$package_dir"/arrayc-targets*.cmake; then
  echo "the installed CMake package refers to LLVM" >&2; exit 1
fi

# LLVM is linked into libarrayc privately; say how many LLVM symbols still leak into its dynamic
# symbol table (informational: a user's own LLVM could clash with them).
if command -v nm >/dev/null 2>&1; then
  leaked=$(nm -D -C --defined-only "$lib" | grep -c 'llvm::' || true)
  echo "== $(basename "$lib"): $leaked exported llvm:: symbols"
fi

echo "== configure and build tests/install against $prefix"
cxx_arg=()
[[ -n "$cxx" ]] && cxx_arg=(-DCMAKE_CXX_COMPILER="$cxx")
cmake -S "$source_dir/tests/install" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" "${cxx_arg[@]}" >"$work/configure.log" || {
  cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" || exit 1

echo "== run"
"$work/build/downstream"
