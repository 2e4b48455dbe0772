#include<stdio.h>
#include<string>
#include<set>
using namespace std;
int prime_hex_digits(string num){
    set<char> primes = {'2', '3', '5', '7', 'B', 'D'};
    int n = 0;
    for (char c : num) n += primes.count(c);
    return n;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(prime_hex_digits("AB") == 1);
    assert(prime_hex_digits("1077E") == 2);
    assert(prime_hex_digits("ABED1A33") == 4);
    assert(prime_hex_digits("2020") == 2);
    assert(prime_hex_digits("") == 0);
    printf("%d\n", prime_hex_digits("123456789ABCDEF0"));
}
