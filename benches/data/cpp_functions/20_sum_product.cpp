#include<stdio.h>
#include<vector>
#include<numeric>
#include<functional>
using namespace std;
vector<long long> sum_and_product(const vector<int>& xs){
    long long s = accumulate(xs.begin(), xs.end(), 0LL);
    long long p = accumulate(xs.begin(), xs.end(), 1LL, multiplies<long long>());
    return {s, p};
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert((sum_and_product({}) == vector<long long>{0, 1}));
    assert((sum_and_product({1, 1, 1}) == vector<long long>{3, 1}));
    assert((sum_and_product({100, 0}) == vector<long long>{100, 0}));
    assert((sum_and_product({3, 5, 7}) == vector<long long>{15, 105}));
    printf("%lld\n", sum_and_product({2, 3, 4, 5, 6})[1]);
}
