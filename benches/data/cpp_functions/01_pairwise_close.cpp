#include<stdio.h>
#include<math.h>
#include<vector>
using namespace std;
#include<algorithm>
#include<stdlib.h>
bool any_pair_closer(vector<float> xs, float gap){
    sort(xs.begin(), xs.end());
    for (size_t i = 1; i < xs.size(); i++)
        if (fabs(xs[i] - xs[i - 1]) < gap) return true;
    return false;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(any_pair_closer({1.0, 2.5, 3.9, 4.0}, 0.3) == true);
    assert(any_pair_closer({1.0, 2.5, 3.9, 5.0}, 0.3) == false);
    assert(any_pair_closer({}, 1.0) == false);
    printf("ok\n");
}
