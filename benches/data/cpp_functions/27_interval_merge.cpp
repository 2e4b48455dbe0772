#include <iostream>
#include <vector>
#include <algorithm>
using namespace std;
vector<vector<int>> merge_intervals(vector<vector<int>> xs) {
    sort(xs.begin(), xs.end());
    vector<vector<int>> out;
    for (auto& x : xs) {
        if (!out.empty() && x[0] <= out.back()[1]) out.back()[1] = max(out.back()[1], x[1]);
        else out.push_back(x);
    }
    return out;
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert((merge_intervals({{1, 3}, {2, 6}, {8, 10}, {15, 18}}) == vector<vector<int>>{{1, 6}, {8, 10}, {15, 18}}));
    assert((merge_intervals({{1, 4}, {4, 5}}) == vector<vector<int>>{{1, 5}}));
    assert(merge_intervals({}).empty());
    cout << merge_intervals({{5, 7}, {1, 2}, {2, 5}}).size() << endl;
}
