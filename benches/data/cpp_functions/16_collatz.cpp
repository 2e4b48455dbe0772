#include<stdio.h>
#include<vector>
#include<algorithm>
using namespace std;
vector<int> odd_collatz(int n){
    vector<int> out;
    while (n != 1) {
        if (n % 2 == 1) out.push_back(n);
        n = n % 2 ? 3 * n + 1 : n / 2;
    }
    out.push_back(1);
    sort(out.begin(), out.end());
    return out;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert((odd_collatz(14) == vector<int>{1, 5, 7, 11, 13, 17}));
    assert((odd_collatz(5) == vector<int>{1, 5}));
    assert((odd_collatz(1) == vector<int>{1}));
    printf("%zu\n", odd_collatz(27).size());
}
