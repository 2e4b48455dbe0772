#include<stdio.h>
#include<string>
#include<algorithm>
using namespace std;
bool is_pal(const string& s){ return equal(s.begin(), s.end(), s.rbegin()); }
string shortest_palindrome_from(string s){
    for (size_t i = 0; i < s.size(); i++) {
        string tail = s.substr(i);
        if (is_pal(tail)) {
            string head = s.substr(0, i);
            reverse(head.begin(), head.end());
            return s + head;
        }
    }
    return s;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(shortest_palindrome_from("") == "");
    assert(shortest_palindrome_from("x") == "x");
    assert(shortest_palindrome_from("cat") == "catac");
    assert(shortest_palindrome_from("cata") == "catac");
    puts(shortest_palindrome_from("abcd").c_str());
}
