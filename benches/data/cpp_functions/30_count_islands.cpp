#include <iostream>
#include <vector>
#include <string>
#include <queue>
#include <utility>
using namespace std;
int count_islands(vector<string> grid) {
    int rows = grid.size(), islands = 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < (int)grid[r].size(); c++) {
            if (grid[r][c] != '#') continue;
            islands++;
            queue<pair<int, int>> todo;
            todo.push({r, c});
            grid[r][c] = '.';
            while (!todo.empty()) {
                auto [y, x] = todo.front();
                todo.pop();
                int dy[] = {1, -1, 0, 0}, dx[] = {0, 0, 1, -1};
                for (int k = 0; k < 4; k++) {
                    int ny = y + dy[k], nx = x + dx[k];
                    if (ny >= 0 && ny < rows && nx >= 0 && nx < (int)grid[ny].size() && grid[ny][nx] == '#') {
                        grid[ny][nx] = '.';
                        todo.push({ny, nx});
                    }
                }
            }
        }
    return islands;
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert(count_islands({"#..#", "#..#", "...."}) == 2);
    assert(count_islands({"####"}) == 1);
    assert(count_islands({}) == 0);
    cout << count_islands({"#.#.#", ".#.#.", "#.#.#"}) << "\n";
}
