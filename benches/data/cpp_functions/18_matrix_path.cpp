#include <iostream>
#include <vector>
#include <climits>
#include <algorithm>
using namespace std;
int min_path_sum(const vector<vector<int>>& grid) {
    int r = grid.size(), c = grid[0].size();
    vector<vector<int>> best(r, vector<int>(c, INT_MAX));
    best[0][0] = grid[0][0];
    for (int i = 0; i < r; i++)
        for (int j = 0; j < c; j++) {
            if (i > 0) best[i][j] = min(best[i][j], best[i - 1][j] + grid[i][j]);
            if (j > 0) best[i][j] = min(best[i][j], best[i][j - 1] + grid[i][j]);
        }
    return best[r - 1][c - 1];
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert(min_path_sum({{1, 3, 1}, {1, 5, 1}, {4, 2, 1}}) == 7);
    assert(min_path_sum({{1, 2, 3}, {4, 5, 6}}) == 12);
    assert(min_path_sum({{5}}) == 5);
    cout << min_path_sum({{1, 9, 9}, {1, 9, 9}, {1, 1, 1}}) << endl;
}
