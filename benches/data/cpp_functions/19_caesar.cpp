#include<stdio.h>
#include<string>
using namespace std;
string shift_letters(string s, int k){
    for (char& c : s)
        if (c >= 'a' && c <= 'z') c = 'a' + (c - 'a' + k % 26 + 26) % 26;
    return s;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(shift_letters("hi", 4) == "lm");
    assert(shift_letters("asdfghjkl", 4) == "ewhjklnop");
    assert(shift_letters(shift_letters("gf", 3), -3) == "gf");
    assert(shift_letters("a b!", 1) == "b c!");
    printf("%s\n", shift_letters("zebra", 2).c_str());
}
