#include <iostream>
#include <vector>
#include <string>
#include <unordered_map>
#include <algorithm>
using namespace std;
int largest_anagram_group(const vector<string>& words) {
    unordered_map<string, int> groups;
    int best = 0;
    for (string w : words) {
        sort(w.begin(), w.end());
        best = max(best, ++groups[w]);
    }
    return best;
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert(largest_anagram_group({"eat", "tea", "tan", "ate", "nat", "bat"}) == 3);
    assert(largest_anagram_group({}) == 0);
    assert(largest_anagram_group({"a"}) == 1);
    cout << largest_anagram_group({"ab", "ba", "abc", "cab", "bca", "x"}) << endl;
}
