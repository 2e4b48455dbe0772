#include<stdio.h>
#include<vector>
#include<string>
using namespace std;
vector<string> letter_grades(vector<float> gpas){
    vector<float> cut = {3.7, 3.3, 3.0, 2.7, 2.3, 2.0, 1.7, 1.3, 1.0, 0.7, 0.0};
    vector<string> name = {"A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "D-"};
    vector<string> out;
    for (float g : gpas) {
        if (g >= 4.0) { out.push_back("A+"); continue; }
        string grade = "E";
        for (size_t i = 0; i < cut.size(); i++) if (g > cut[i]) { grade = name[i]; break; }
        out.push_back(grade);
    }
    return out;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert((letter_grades({4.0, 3, 1.7, 2, 3.5}) == vector<string>{"A+", "B", "C-", "C", "A-"}));
    assert((letter_grades({1.2}) == vector<string>{"D+"}));
    assert((letter_grades({0.0}) == vector<string>{"E"}));
    printf("%s\n", letter_grades({3.9})[0].c_str());
}
