#include<stdio.h>
#include<string>
#include<stdlib.h>
using namespace std;
bool valid_date(string date){
    if (date.size() != 10 || date[2] != '-' || date[5] != '-') return false;
    for (int i : {0, 1, 3, 4, 6, 7, 8, 9}) if (date[i] < '0' || date[i] > '9') return false;
    int m = atoi(date.substr(0, 2).c_str()), d = atoi(date.substr(3, 2).c_str());
    if (m < 1 || m > 12 || d < 1) return false;
    int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return d <= days[m - 1];
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(valid_date("03-11-2000"));
    assert(!valid_date("15-01-2012"));
    assert(!valid_date("04-0-2040"));
    assert(valid_date("06-04-2020"));
    assert(!valid_date("04-31-2020"));
    assert(!valid_date(""));
    printf("%d\n", valid_date("02-29-2024"));
}
