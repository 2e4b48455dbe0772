#include <iostream>
#include <vector>
#include <set>
#include <algorithm>
using namespace std;
vector<int> sorted_distinct(vector<int> xs) {
    set<int> seen(xs.begin(), xs.end());
    return vector<int>(seen.begin(), seen.end());
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert((sorted_distinct({5, 3, 5, 2, 3, 3, 9, 0, 123}) == vector<int>{0, 2, 3, 5, 9, 123}));
    assert(sorted_distinct({}).empty());
    auto v = sorted_distinct({7, 7, 7});
    cout << v.size() << " " << v[0] << "\n";
}
