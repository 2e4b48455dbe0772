#include <stdio.h>
#include <vector>
#include <algorithm>
#include <climits>
using namespace std;
vector<int> rolling_maximum(const vector<int>& xs) {
    vector<int> out;
    int best = INT_MIN;
    for (int x : xs) { best = max(best, x); out.push_back(best); }
    return out;
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert((rolling_maximum({1, 2, 3, 2, 3, 4, 2}) == vector<int>{1, 2, 3, 3, 3, 4, 4}));
    assert((rolling_maximum({4, 3, 2, 1}) == vector<int>{4, 4, 4, 4}));
    assert(rolling_maximum({}).empty());
    printf("%d\n", rolling_maximum({-5, -7})[1]);
}
