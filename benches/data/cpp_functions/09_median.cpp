#include<stdio.h>
#include<math.h>
#include<vector>
#include<algorithm>
using namespace std;
double median_of(vector<double> xs){
    sort(xs.begin(), xs.end());
    size_t n = xs.size();
    if (n % 2 == 1) return xs[n / 2];
    return 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(fabs(median_of({3, 1, 2, 4, 5}) - 3) < 1e-9);
    assert(fabs(median_of({-10, 4, 6, 1000, 10, 20}) - 8.0) < 1e-9);
    assert(fabs(median_of({5}) - 5) < 1e-9);
    printf("%.2f\n", median_of({8, 1, 3, 9, 9, 2, 7}));
}
