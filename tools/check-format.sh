#!/usr/bin/env bash
# Checks that every tracked *.c and *.h file is formatted as the checked-in .clang-format says
# (clang-format 14, Debian's clang-format package). Prints each file that differs and exits 1.
#   tools/check-format.sh         check
#   tools/check-format.sh --fix   reformat the files that differ, in place
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC"

CLANG_FORMAT=${CLANG_FORMAT:-}
if [ -z "$CLANG_FORMAT" ]; then
    for c in clang-format-14 clang-format; do
        if command -v "$c" >/dev/null; then CLANG_FORMAT=$c; break; fi
    done
fi
[ -n "$CLANG_FORMAT" ] || { echo "check-format: clang-format not found (apt-get install clang-format)" >&2; exit 2; }

fix=false
case "${1:-}" in
--fix) fix=true ;;
"") ;;
*) echo "usage: $0 [--fix]" >&2; exit 2 ;;
esac

differ=()
while IFS= read -r -d '' f; do
    if ! "$CLANG_FORMAT" --style=file --dry-run -Werror "$f" >/dev/null 2>&1; then
        differ+=("$f")
    fi
done < <(git ls-files -z -- '*.c' '*.h')

if [ ${#differ[@]} -eq 0 ]; then
    echo "check-format: all tracked *.c and *.h files match .clang-format"
    exit 0
fi
if $fix; then
    "$CLANG_FORMAT" --style=file -i "${differ[@]}"
    printf 'check-format: reformatted %s\n' "${differ[@]}"
    exit 0
fi
printf 'check-format: differs from .clang-format: %s\n' "${differ[@]}"
echo "check-format: run tools/check-format.sh --fix (or clang-format -i FILE) and commit the result"
exit 1
