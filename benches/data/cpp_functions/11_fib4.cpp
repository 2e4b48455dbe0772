#include<stdio.h>
#include<vector>
using namespace std;
long long fib4(int n){
    vector<long long> f = {0, 0, 2, 0};
    if (n < 4) return f[n];
    for (int i = 4; i <= n; i++) {
        long long next = f[0] + f[1] + f[2] + f[3];
        f = {f[1], f[2], f[3], next};
    }
    return f[3];
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(fib4(5) == 4);
    assert(fib4(8) == 28);
    assert(fib4(10) == 104);
    assert(fib4(12) == 386);
    printf("%lld\n", fib4(40));
}
