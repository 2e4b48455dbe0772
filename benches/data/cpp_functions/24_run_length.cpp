#include <string>
#include <vector>
#include <utility>
#include <iostream>
using namespace std;
vector<pair<char, int>> run_length(const string& s) {
    vector<pair<char, int>> runs;
    for (char c : s) {
        if (!runs.empty() && runs.back().first == c) runs.back().second++;
        else runs.push_back({c, 1});
    }
    return runs;
}
#undef NDEBUG
#include <cassert>
int main() {
    auto r = run_length("aaabccdddd");
    assert(r.size() == 4);
    assert(r[0] == make_pair('a', 3) && r[3] == make_pair('d', 4));
    assert(run_length("").empty());
    for (auto& [c, n] : run_length("xxyz")) cout << c << n;
    cout << endl;
}
