#!/usr/bin/env python3
"""core/app, the runner's command line, stays at most --limit lines in all (issue 21: the runs live in the
library, core/src; core/app maps the command line onto them). Counts every line of its .cpp and .hpp files,
as `find core/app -name '*.[ch]pp' | xargs wc -l` does, and names the largest files when over."""
import argparse
import pathlib
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, required=True)
    parser.add_argument("app_dir", type=pathlib.Path)
    args = parser.parse_args()
    files = sorted(p for p in args.app_dir.rglob("*") if p.suffix in (".cpp", ".hpp") and p.is_file())
    if not files:
        print(f"error: {args.app_dir}: no .cpp or .hpp files (is this core/app?)")
        return 1
    counts = {p: p.read_bytes().count(b"\n") for p in files}
    total = sum(counts.values())
    if total > args.limit:
        largest = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
        shown = ", ".join(f"{p.relative_to(args.app_dir)} {n}" for p, n in largest)
        print(f"error: {args.app_dir} has {total} lines in {len(files)} files, over the limit of {args.limit}: "
              f"move what is not the command line into core/src (the largest: {shown})")
        return 1
    print(f"ok: {args.app_dir} has {total} lines in {len(files)} files (the limit is {args.limit})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
