#include<stdio.h>
#include<math.h>
#include<vector>
using namespace std;
vector<int> prime_factors(int n){
    vector<int> out;
    for (int p = 2; p * p <= n; p++)
        while (n % p == 0) { out.push_back(p); n /= p; }
    if (n > 1) out.push_back(n);
    return out;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert((prime_factors(2) == vector<int>{2}));
    assert((prime_factors(57) == vector<int>{3, 19}));
    assert((prime_factors(3 * 2 * 3 * 2 * 5) == vector<int>{2, 2, 3, 3, 5}));
    assert((prime_factors(1) == vector<int>{}));
    printf("%zu\n", prime_factors(1 << 20).size());
}
