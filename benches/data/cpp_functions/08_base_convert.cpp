#include<stdio.h>
#include<string>
using namespace std;
string to_base(int x, int base){
    if (x == 0) return "0";
    string out;
    while (x > 0) { out = to_string(x % base) + out; x /= base; }
    return out;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(to_base(8, 3) == "22");
    assert(to_base(9, 3) == "100");
    assert(to_base(234, 2) == "11101010");
    assert(to_base(0, 7) == "0");
    for (int b = 2; b < 8; b++) assert(to_base(b, b) == "10");
    printf("%s\n", to_base(255, 2).c_str());
}
