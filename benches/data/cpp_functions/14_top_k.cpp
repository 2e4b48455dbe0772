#include<stdio.h>
#include<vector>
#include<queue>
#include<functional>
using namespace std;
vector<int> top_k(const vector<int>& xs, int k){
    priority_queue<int, vector<int>, greater<int>> heap;
    for (int x : xs) { heap.push(x); if ((int)heap.size() > k) heap.pop(); }
    vector<int> out;
    while (!heap.empty()) { out.push_back(heap.top()); heap.pop(); }
    return out;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert((top_k({-3, -4, 5}, 3) == vector<int>{-4, -3, 5}));
    assert((top_k({4, -4, 4}, 2) == vector<int>{4, 4}));
    assert((top_k({1, 2, 3, -23, 243, -400, 0}, 0) == vector<int>{}));
    printf("%d\n", top_k({5, 15, 0, 3, -13, -8, 0}, 7)[6]);
}
