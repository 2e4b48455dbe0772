#include <iostream>
#include <sstream>
#include <vector>
#include <string>
#include <algorithm>
using namespace std;
vector<string> words_by_length(const string& sentence) {
    istringstream in(sentence);
    vector<string> words;
    string w;
    while (in >> w) words.push_back(w);
    stable_sort(words.begin(), words.end(), [](const string& a, const string& b) { return a.size() < b.size(); });
    return words;
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert((words_by_length("the quick brown fox") == vector<string>{"the", "fox", "quick", "brown"}));
    assert(words_by_length("").empty());
    auto w = words_by_length("a bb ccc dd e");
    cout << w.front() << w.back() << '\n';
}
