#include <iostream>
#include <sstream>
#include <string>
#include <map>
using namespace std;
map<string, int> word_frequencies(const string& text) {
    map<string, int> counts;
    istringstream in(text);
    string word;
    while (in >> word) counts[word]++;
    return counts;
}
#undef NDEBUG
#include <cassert>
int main() {
    auto f = word_frequencies("a b a c b a");
    assert(f["a"] == 3 && f["b"] == 2 && f["c"] == 1);
    assert(f.size() == 3);
    assert(word_frequencies("").empty());
    cout << f.begin()->first << ' ' << f.rbegin()->second << endl;
}
