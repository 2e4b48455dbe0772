#include <string>
#include <iostream>
#include <algorithm>
using namespace std;
string rotate_digits(int x, int shift) {
    string s = to_string(x);
    if (shift > (int)s.size()) { reverse(s.begin(), s.end()); return s; }
    return s.substr(s.size() - shift) + s.substr(0, s.size() - shift);
}
#undef NDEBUG
#include <assert.h>
int main() {
    assert(rotate_digits(100, 2) == "001");
    assert(rotate_digits(12, 2) == "12");
    assert(rotate_digits(97, 8) == "79");
    assert(rotate_digits(12, 1) == "21");
    cout << rotate_digits(123456, 4) << '\n';
}
