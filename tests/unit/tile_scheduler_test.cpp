// Step 13's tile order (plugins/13_wgmma_persistent/tile_scheduler.cuh), checked on the CPU: on every grid up to
// 64 x 64 units each unit is visited exactly once and each step goes to a neighbouring unit (the generalised
// Hilbert curve allows one diagonal step on a grid with an odd side, never on an even x even one), and the units a
// persistent grid runs at once cover fewer tile rows and columns (so read fewer L2 bytes) than step 12's bands.
#include "../../plugins/13_wgmma_persistent/tile_scheduler.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <vector>

namespace {

using kreg_cuda::step13::hilbert_unit;

TEST(TileScheduler, EveryUnitOnceAndEveryStepToANeighbour) {
    for (int rows = 1; rows <= 64; ++rows)
        for (int cols = 1; cols <= 64; ++cols) {
            std::vector<int> seen(size_t(rows * cols), 0);
            int previous_row = 0, previous_col = 0, diagonal_steps = 0;
            for (int u = 0; u < rows * cols; ++u) {
                int r = -1, c = -1;
                hilbert_unit(u, rows, cols, r, c);
                ASSERT_TRUE(r >= 0 && r < rows && c >= 0 && c < cols)
                    << rows << "x" << cols << ": unit " << u << " -> (" << r << ", " << c << ")";
                ++seen[size_t(r * cols + c)];
                if (u > 0) {
                    const int dr = std::abs(r - previous_row), dc = std::abs(c - previous_col);
                    ASSERT_LE(std::max(dr, dc), 1) << rows << "x" << cols << ": a jump at unit " << u;
                    diagonal_steps += dr == 1 && dc == 1;
                }
                previous_row = r;
                previous_col = c;
            }
            for (int count : seen)
                ASSERT_EQ(count, 1) << rows << "x" << cols << ": a unit visited " << count << " times";
            EXPECT_LE(diagonal_steps, (rows % 2 == 0 && cols % 2 == 0) ? 0 : 1) << rows << "x" << cols;
        }
}

// Step 12's order (wgmma_ws.cu, unit_origin): groups of `group_rows` unit rows, column by column.
void banded_unit(int u, int unit_rows, int unit_cols, int group_rows, int& row, int& col) {
    const int per_group = group_rows * unit_cols;
    const int first = u / per_group * group_rows;
    const int rows = std::min(unit_rows - first, group_rows);
    const int in_group = u % per_group;
    row = first + in_group % rows;
    col = in_group / rows;
}

// Bytes of A and B one wave of `resident` units reads from L2 per k tile, in units of a 128-row A tile: every
// distinct tile row reads BM = 128 rows of A, every distinct tile column BN columns of B. Clusters of 2 vertically
// adjacent tiles: a unit is 2 tile rows (and reads its B columns once, by multicast).
double worst_wave_bytes(bool hilbert, int unit_rows, int unit_cols, int resident, int bn) {
    double worst = 0;
    const int units = unit_rows * unit_cols;
    for (int start = 0; start < units; start += resident) {
        std::set<int> rows, cols;
        for (int u = start; u < std::min(units, start + resident); ++u) {
            int r, c;
            if (hilbert)
                hilbert_unit(u, unit_rows, unit_cols, r, c);
            else
                banded_unit(u, unit_rows, unit_cols, 8, r, c);  // kGroupRows = 16 / kCluster
            rows.insert(r);
            cols.insert(c);
        }
        worst = std::max(worst, 2.0 * double(rows.size()) + double(cols.size()) * bn / 128.0);
    }
    return worst;
}

// The lever's premise, before the H200 measures it: at 4096^3 and 8192^3 (bf16 `_c2`: 128 x 256 tiles in
// clusters of 2, 66 clusters resident on 132 SMs) no wave along the curve reads more than the bands' worst one.
TEST(TileScheduler, AHilbertWaveReadsNoMoreThanStep12sBands) {
    for (int size : {4096, 8192}) {
        const int unit_rows = size / 128 / 2, unit_cols = size / 256;
        const double hilbert = worst_wave_bytes(true, unit_rows, unit_cols, 66, 256);
        const double banded = worst_wave_bytes(false, unit_rows, unit_cols, 66, 256);
        EXPECT_LE(hilbert, banded) << size << "^3: Hilbert " << hilbert << ", bands " << banded;
        RecordProperty("wave_tiles_" + std::to_string(size) + "_hilbert", std::to_string(hilbert));
        RecordProperty("wave_tiles_" + std::to_string(size) + "_banded", std::to_string(banded));
    }
}

}  // namespace
