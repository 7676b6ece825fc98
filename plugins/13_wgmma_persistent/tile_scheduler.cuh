// Step 13's tile order: the u-th work unit of a unit_rows x unit_cols grid along a generalised Hilbert curve
// (J. Červený's "gilbert", which covers any rectangle, not only 2^n squares).
//
// Why: a persistent grid of P blocks runs units u .. u + P - 1 at about the same time. Step 12 walks them in
// groups of 16 unit rows, column by column, so the units in flight form a 16-row band a few columns wide, and
// the band's far end reads A rows the near end no longer needs. Along a Hilbert curve any run of consecutive
// units is a compact patch whose perimeter (the A rows plus B columns it reads from L2) is close to the minimum
// for its area, at every wave and on every rectangle, with no group height to tune. Whether that beats the bands
// on the H200 is the lever's measurement (README.md).
//
// __host__ __device__ so that tests/unit/tile_scheduler_test.cpp checks it on the CPU: every unit visited
// exactly once, each step to a neighbouring unit. The recursion of the reference implementation is a tail call
// at every branch, so it is a loop here: O(log(max(rows, cols))) steps, a few dozen integer operations per unit,
// against a unit's thousands of cycles of loads and MMAs.
#pragma once

#if defined(__CUDACC__)
#define KREG_SCHEDULER_FN __host__ __device__ __forceinline__
#else
#define KREG_SCHEDULER_FN inline
#endif

namespace kreg_cuda::step13 {

KREG_SCHEDULER_FN int sign_of(int v) { return (v > 0) - (v < 0); }
KREG_SCHEDULER_FN int abs_of(int v) { return v < 0 ? -v : v; }
// Python's //, which the curve's reference implementation uses: it rounds towards minus infinity, not zero.
KREG_SCHEDULER_FN int floor_half(int v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Unit u (0 <= u < unit_rows * unit_cols) -> its (row, col) along the curve. The curve runs along the longer
// side first, so a wide grid is walked in row-major-like strokes and a tall one column-major-like.
KREG_SCHEDULER_FN void hilbert_unit(int u, int unit_rows, int unit_cols, int& row, int& col) {
    // (x, y) = (col, row); a = the major axis of the current rectangle, b = the minor one.
    int x = 0, y = 0, ax, ay, bx, by;
    if (unit_cols >= unit_rows) {
        ax = unit_cols, ay = 0, bx = 0, by = unit_rows;
    } else {
        ax = 0, ay = unit_rows, bx = unit_cols, by = 0;
    }
    int first = 0;  // the curve index of (x, y)
    for (;;) {
        const int w = abs_of(ax + ay), h = abs_of(bx + by);
        const int dax = sign_of(ax), day = sign_of(ay), dbx = sign_of(bx), dby = sign_of(by);
        const int d = u - first;
        if (h == 1) {
            x += dax * d, y += day * d;
            break;
        }
        if (w == 1) {
            x += dbx * d, y += dby * d;
            break;
        }
        int ax2 = floor_half(ax), ay2 = floor_half(ay), bx2 = floor_half(bx), by2 = floor_half(by);
        const int w2 = abs_of(ax2 + ay2), h2 = abs_of(bx2 + by2);
        if (2 * w > 3 * h) {
            // Long rectangle: two halves along the major axis (the first an even number of steps long).
            if ((w2 % 2) && w > 2) ax2 += dax, ay2 += day;
            const int next = first + abs_of((ax2 + ay2) * (bx + by));
            if (u < next) {
                ax = ax2, ay = ay2;
            } else {
                first = next;
                x += ax2, y += ay2;
                ax -= ax2, ay -= ay2;
            }
            continue;
        }
        // Standard case: up the minor half, along the whole major axis, back down.
        if ((h2 % 2) && h > 2) bx2 += dbx, by2 += dby;
        const int next1 = first + abs_of((bx2 + by2) * (ax2 + ay2));
        if (u < next1) {
            const int nax = bx2, nay = by2;
            bx = ax2, by = ay2;
            ax = nax, ay = nay;
            continue;
        }
        first = next1;
        const int next2 = first + abs_of((ax + ay) * ((bx - bx2) + (by - by2)));
        if (u < next2) {
            x += bx2, y += by2;
            bx -= bx2, by -= by2;
            continue;
        }
        first = next2;
        x += (ax - dax) + (bx2 - dbx);
        y += (ay - day) + (by2 - dby);
        const int nax = -bx2, nay = -by2, nbx = -(ax - ax2), nby = -(ay - ay2);
        ax = nax, ay = nay, bx = nbx, by = nby;
    }
    row = y;
    col = x;
}

}  // namespace kreg_cuda::step13

#undef KREG_SCHEDULER_FN
