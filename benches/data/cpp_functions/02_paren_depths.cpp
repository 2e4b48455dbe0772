#include<stdio.h>
#include<vector>
#include<string>
using namespace std;
vector<int> paren_depths(string s){
    vector<int> out;
    int depth = 0, best = 0;
    for (char c : s) {
        if (c == '(') { depth++; best = max(best, depth); }
        else if (c == ')') { depth--; if (depth == 0) { out.push_back(best); best = 0; } }
    }
    return out;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert((paren_depths("(()()) ((())) () ((())()())") == vector<int>{2, 3, 1, 3}));
    assert((paren_depths("") == vector<int>{}));
    assert((paren_depths("(((())))") == vector<int>{4}));
    printf("ok\n");
}
