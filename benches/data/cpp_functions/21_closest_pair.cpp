#include<stdio.h>
#include<math.h>
#include<vector>
#include<algorithm>
using namespace std;
vector<float> closest_pair(vector<float> xs){
    sort(xs.begin(), xs.end());
    vector<float> best = {xs[0], xs[1]};
    for (size_t i = 2; i < xs.size(); i++)
        if (xs[i] - xs[i - 1] < best[1] - best[0]) best = {xs[i - 1], xs[i]};
    return best;
}
#undef NDEBUG
#include<assert.h>
bool same(vector<float> a, vector<float> b){
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) if (fabs(a[i] - b[i]) > 1e-4) return false;
    return true;
}
int main(){
    assert(same(closest_pair({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}), {3.9, 4.0}));
    assert(same(closest_pair({1.0, 2.0, 5.9, 4.0, 5.0}), {5.0, 5.9}));
    assert(same(closest_pair({1.1, 2.2, 3.1, 4.1, 5.1}), {2.2, 3.1}));
    printf("ok\n");
}
