#!/usr/bin/python3
"""Theoretical shared-memory bank conflicts of the lecture's BlockTranspose, BLOCK_SIZE 1..20.

Prints the theory columns of docs/TRANSPOSE.md's table (markdown). Model: 32 banks of 4-byte words, bank =
word mod 32; a warp is 32 consecutive thread ids (id = ty * B + tx) of a B x B block; a request takes as
many wavefronts as the largest number of distinct words it touches in one bank. The load
blockA[tx][ty] reads word tx * S + ty, the store blockA[ty][tx] writes word ty * S + tx, with the row
stride S = B (as written) or B + 1 (padded). For each, the worst warp of the block and the mean over its
warps (what ncu reports as wavefronts / requests).

    tools/bank_conflicts.py            # the table, B = 1..20
    tools/bank_conflicts.py --max 32   # further
    tools/bank_conflicts.py --measured a.txt b.txt   # with ncu's columns from `runner --profile` outputs

--measured reads the lines `runner --profile --kernels 'cuda_block_transpose*'` prints (kernel, block,
shape, time, then ld requests, wavefronts, conflicts, ld_way, st requests, wavefronts, conflicts, st_way);
a block with no line, or only "skipped" ones, shows n/a.
"""
import argparse
from math import gcd


def wavefronts_per_warp(b, stride, load):
    out = []
    for first in range(0, b * b, 32):
        words_in_bank = {}
        for tid in range(first, min(first + 32, b * b)):
            ty, tx = divmod(tid, b)
            word = tx * stride + ty if load else ty * stride + tx
            words_in_bank.setdefault(word % 32, set()).add(word)
        out.append(max(len(words) for words in words_in_bank.values()))
    return out


def cell(b, stride, load):
    w = wavefronts_per_warp(b, stride, load)
    return f"{max(w)} / {sum(w) / len(w):.2f}"


def read_measured(paths):
    """{(kernel, block): (ld_way, st_way)} from runner --profile outputs; the last measured line wins."""
    out = {}
    for path in paths:
        with open(path) as f:
            lines = f.readlines()
        for line in lines:
            cols = line.split()
            if len(cols) != 12 or not cols[0].startswith("cuda_block_transpose") or not cols[1].isdigit():
                continue
            out[(cols[0], int(cols[1]))] = (cols[7], cols[11])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=20, help="largest BLOCK_SIZE (default 20)")
    parser.add_argument("--measured", nargs="+", metavar="FILE",
                        help="runner --profile outputs to fill the measured columns from (later files win)")
    args = parser.parse_args()
    measured = read_measured(args.measured) if args.measured else {}

    def m(kernel, b, which):
        got = measured.get((kernel, b))
        return got[which] if got else ("n/a" if args.measured else "_")

    print("| B | warps/block | gcd(B,32) | one thread row: ⌈B·gcd/32⌉ | as written, load: worst / mean | as written, store"
          " | padded load (S = B+1) | padded store | measured: as written ld_way | measured: padded ld_way"
          " | measured: as written st_way | measured: padded st_way |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for b in range(1, args.max + 1):
        g = gcd(b, 32)
        print(f"| {b} | {-(-b * b // 32)} | {g} | {-(-b * g // 32)} | {cell(b, b, True)} | {cell(b, b, False)}"
              f" | {cell(b, b + 1, True)} | {cell(b, b + 1, False)}"
              f" | {m('cuda_block_transpose', b, 0)} | {m('cuda_block_transpose_padded', b, 0)}"
              f" | {m('cuda_block_transpose', b, 1)} | {m('cuda_block_transpose_padded', b, 1)} |")


if __name__ == "__main__":
    main()
