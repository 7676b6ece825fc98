#!/usr/bin/env bash
# The tree is formatted with the .clang-format it commits (docs/CONTRIBUTING.md, "Formatting"): every
# C++ and CUDA file of the checkout, as clang-format formats it, must be the file itself.
#
#   tests/tools/check_format.sh SOURCE_DIR
#
# Exit 0 when every file is formatted; 1 naming each file that is not (with the first lines of the
# difference) and the command that formats them, or when clang-format is missing.
set -euo pipefail
cd "${1:?usage: check_format.sh SOURCE_DIR}"
if ! command -v clang-format >/dev/null; then
    echo "check_format: clang-format is not installed (Debian: apt-get install clang-format; tools/setup.sh test installs it)"
    exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
else  # a tarball of the tree: the same folders git would list
    mapfile -t files < <(find core plugins tests -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
fi
bad=()
for f in "${files[@]}"; do
    [[ -f $f ]] || continue  # deleted in the work tree, not yet in the index
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then
        bad+=("$f")
        if (( ${#bad[@]} <= 5 )); then
            diff -u --label "$f" --label "$f (formatted)" "$f" <(clang-format --style=file "$f") | head -12 || true
        fi
    fi
done
if (( ${#bad[@]} )); then
    echo "check_format: ${#bad[@]} of ${#files[@]} files differ from $(clang-format --version | head -1) with the committed .clang-format:"
    printf '  %s\n' "${bad[@]}"
    echo "format them with: clang-format -i ${bad[*]:0:5}$( (( ${#bad[@]} > 5 )) && echo ' ...')"
    exit 1
fi
echo "check_format: ${#files[@]} files, all formatted ($(clang-format --version | head -1))"
