#include<stdio.h>
#include<string>
#include<algorithm>
#include<ctype.h>
using namespace std;
int vowel_count(string s){
    string vowels = "aeiouAEIOU";
    int n = count_if(s.begin(), s.end(), [&](char c){ return vowels.find(c) != string::npos; });
    if (!s.empty() && tolower(s.back()) == 'y') n++;
    return n;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(vowel_count("abcde") == 2);
    assert(vowel_count("Alone") == 3);
    assert(vowel_count("key") == 2);
    assert(vowel_count("bye") == 1);
    assert(vowel_count("ACEDY") == 3);
    printf("%d\n", vowel_count("programming language"));
}
