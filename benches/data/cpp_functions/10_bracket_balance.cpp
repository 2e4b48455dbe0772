#include <iostream>
#include <string>
#include <stack>
using namespace std;
bool balanced(const string& s) {
    stack<char> open;
    for (char c : s) {
        if (c == '(' || c == '[' || c == '{') open.push(c);
        else {
            if (open.empty()) return false;
            char o = open.top(); open.pop();
            if ((c == ')' && o != '(') || (c == ']' && o != '[') || (c == '}' && o != '{')) return false;
        }
    }
    return open.empty();
}
#undef NDEBUG
#include <cassert>
int main() {
    assert(balanced("([]{})"));
    assert(!balanced("(]"));
    assert(!balanced("(("));
    assert(balanced(""));
    cout << boolalpha << balanced("{[()()]}") << endl;
}
