#include<stdio.h>
#include<math.h>
using namespace std;
double triangle_area(double a, double b, double c){
    if (a + b <= c || a + c <= b || b + c <= a) return -1;
    double s = (a + b + c) / 2;
    return round(sqrt(s * (s - a) * (s - b) * (s - c)) * 100) / 100;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(fabs(triangle_area(3, 4, 5) - 6.00) < 0.01);
    assert(fabs(triangle_area(1, 2, 10) + 1) < 0.01);
    assert(fabs(triangle_area(4, 8, 5) - 8.18) < 0.01);
    assert(fabs(triangle_area(2, 2, 2) - 1.73) < 0.01);
    printf("%.2f\n", triangle_area(10, 5, 7));
}
