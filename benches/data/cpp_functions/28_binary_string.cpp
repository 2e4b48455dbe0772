#include<stdio.h>
#include<string>
#include<bitset>
using namespace std;
string to_binary_tagged(int n){
    string bits = bitset<32>(n).to_string();
    size_t first = bits.find('1');
    bits = first == string::npos ? "0" : bits.substr(first);
    return "db" + bits + "db";
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(to_binary_tagged(0) == "db0db");
    assert(to_binary_tagged(32) == "db100000db");
    assert(to_binary_tagged(103) == "db1100111db");
    assert(to_binary_tagged(15) == "db1111db");
    printf("%s\n", to_binary_tagged(1000).c_str());
}
