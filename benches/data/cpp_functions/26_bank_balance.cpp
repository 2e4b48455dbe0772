#include<stdio.h>
#include<vector>
using namespace std;
bool goes_below_zero(vector<int> operations){
    long long balance = 0;
    for (int op : operations) {
        balance += op;
        if (balance < 0) return true;
    }
    return false;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(goes_below_zero({}) == false);
    assert(goes_below_zero({1, 2, -3, 1, 2, -3}) == false);
    assert(goes_below_zero({1, 2, -4, 5, 6}) == true);
    assert(goes_below_zero({1, -1, 2, -2, 5, -5, 4, -5}) == true);
    printf("%d\n", goes_below_zero({1, -2}));
}
