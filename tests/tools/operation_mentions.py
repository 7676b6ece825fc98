#!/usr/bin/env python3
"""How many files of core/ name an operation outside its own class (core/src/ops) and the operation table
(core/src/common/operations.def): at most --limit for each operation given (issue 21: an operation is data, so
adding one touches its ops/ entry, the table and at most a few other files). A file names an operation when
its text holds the name (or its ABI constant's suffix, BLOCK_TRANSPOSE) at the start of a word, in any case
and in comments too: a comment that has to name the operation is a place that knows about it.

    operation_mentions.py --limit 3 --core core block_transpose reduction

Each name must be an operation of the table, so that a rename cannot make the check pass by counting nothing."""
import argparse
import pathlib
import re
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, required=True)
    parser.add_argument("--core", type=pathlib.Path, required=True, help="the repository's core/ folder")
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    table = args.core / "src" / "common" / "operations.def"
    known = set(re.findall(r"^KREG_OPERATION\((\w+),", table.read_text(), re.M))
    if not known:
        print(f"error: {table}: no KREG_OPERATION row found")
        return 2
    files = [p for p in sorted(args.core.rglob("*")) if p.is_file() and p.suffix in (".cpp", ".hpp", ".h", ".cu", ".cuh", ".def", ".txt", ".cmake", ".in")]
    ops_dir = args.core / "src" / "ops"
    failed = False
    for name in args.names:
        if name not in known:
            print(f"error: '{name}' is not an operation of {table} (it has {', '.join(sorted(known))})")
            return 2
        pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(name), re.I)
        naming = [p for p in files if p != table and ops_dir not in p.parents
                  and pattern.search(p.read_text(errors="replace"))]
        shown = ", ".join(str(p.relative_to(args.core.parent)) for p in naming)
        verdict = "ok" if len(naming) <= args.limit else "error"
        failed |= verdict == "error"
        print(f"{verdict}: {name}: {len(naming)} files of core outside core/src/ops and the table name it "
              f"(the limit is {args.limit}){': ' + shown if naming else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
