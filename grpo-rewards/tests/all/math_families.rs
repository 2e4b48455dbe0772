//! One table per answer family that the checker once missed (issue #27), each with the pairs
//! that must stay unequal next to the ones that must match. Every pair goes through the whole
//! checker: extraction, the one normalisation pipeline, parsing, equivalence.

use crate::math_forms::default_table as table;

#[test]
fn unions_of_intervals_whatever_the_spacing() {
    table(
        "unions",
        &[
            (r"(1, 4) \cup (4, 250)", r"\boxed{(1,4)\cup(4,250)}", true),
            (r"(1,4) \cup (4,250)", r"\boxed{(1, 4) \cup (4, 250)}", true),
            (
                r"[0,315] \cup (316, 900)",
                r"\boxed{[0, 315]\cup(316,900)}",
                true,
            ),
            // inside brackets a comma separates items, never thousands
            (r"(12,345)", r"\boxed{(12, 345)}", true),
            (r"(12,345)", r"\boxed{12345}", false),
            (r"(1,4) \cup (4,250)", r"\boxed{(1,4) \cup [4,250)}", false),
            (r"(1,4) \cup (4,250)", r"\boxed{(1,4) \cup (4,251)}", false),
        ],
    );
}

#[test]
fn thousands_written_with_thin_negative_space() {
    table(
        "thousands",
        &[
            ("48213", r"so it is $\boxed{48,\!213}$", true),
            ("48213", r"$\boxed{48,\! 213}$", true),
            ("7400500", r"\boxed{7,\! 400,\! 500}", true),
            ("7400500", r"the total is $7 {, }400 {, }500$", true),
            ("48213", r"\boxed{48,\!214}", false),
            // a list stays a list
            ("4, 8", r"\boxed{4,\! 8}", true),
        ],
    );
}

#[test]
fn labelled_equations_and_roots_as_references() {
    table(
        "labelled references",
        &[
            (
                r"t_1 = 3, \quad t_2 = -4",
                r"\boxed{3} \text{ and } \boxed{-4}",
                true,
            ),
            (r"t_{1}=3,\quadt_{2}=-4", r"\boxed{-4, 3}", true),
            (r"t_1 = 3, t_2 = -4", r"\boxed{(3, -4)}", true),
            (r"t_1 = 3, t_2 = -4", r"\boxed{3, 4}", false),
            (r"m=3,n=1;m=6,n=4", r"\boxed{(3,1), (6,4)}", true),
            (r"m=3,n=1;m=6,n=4", r"\boxed{(6,4), (3,1)}", true),
            (r"m=3,n=1;m=6,n=4", r"\boxed{(1,3), (4,6)}", false),
            (r"m=3,n=1;m=6,n=4", r"\boxed{(3,1)}", false),
            (
                r"\frac{PQ}{QR} = \frac{2}{\sqrt{5}}",
                r"\boxed{\frac{2\sqrt5}{5}}",
                true,
            ),
            (
                r"\frac{PQ}{QR} = \frac{2}{\sqrt{5}}",
                r"\boxed{\frac{2}{5}}",
                false,
            ),
        ],
    );
}

#[test]
fn a_gold_equation_is_not_its_bare_side() {
    table(
        "gold equations",
        &[
            // the same relation, either way round or scaled
            ("9 = 4b + d", r"\boxed{4b + d = 9}", true),
            ("9 = 4b + d", r"\boxed{8b + 2d = 18}", true),
            // never the bare expression that drops the constant side, nor the constant
            ("9 = 4b + d", r"\boxed{4b + d}", false),
            ("9 = 4b + d", r"\boxed{9}", false),
            ("b + 2d = 0", r"\boxed{0}", false),
            // a label takes its value
            ("y = 9", r"\boxed{9}", true),
            ("9 = y", r"\boxed{9}", true),
        ],
    );
}

#[test]
fn interval_membership_against_inequalities_both_ways() {
    table(
        "membership",
        &[
            (r"x \in [-3, 8]", r"\boxed{-3 \le x \le 8}", true),
            (r"-3 \le x \le 8", r"\boxed{x \in [-3, 8]}", true),
            (r"-3 \le x < 8", r"\boxed{x \in [-3, 8)}", true),
            (r"x \in [-3, 8]", r"\boxed{-3 < x \le 8}", false),
            (r"x \in [-3, 8]", r"\boxed{-3 \le x \le 9}", false),
            // |z| bounds against the union they describe
            (
                r"2 \le |w| \le 5",
                r"\boxed{w \in [-5, -2] \cup [2, 5]}",
                true,
            ),
            (r"|w| < 4", r"\boxed{(-4, 4)}", true),
            (r"|w| > 1", r"\boxed{(-\infty, -1) \cup (1, \infty)}", true),
            (r"2 \le |w| \le 5", r"\boxed{[2, 5]}", false),
            (r"2 \le |w| \le 5", r"\boxed{[-5, -2) \cup [2, 5]}", false),
        ],
    );
}

#[test]
fn several_boxes_against_a_listed_reference() {
    table(
        "several boxes",
        &[
            (
                "(2, 5), (4, 1)",
                r"$\boxed{(2, 5)} \text{ for part (a) and } \boxed{(4, 1)}$",
                true,
            ),
            (
                r"\boxed{6} chairs and \boxed{3} tables",
                r"\boxed{6, 3}",
                true,
            ),
            (
                r"\boxed{12 \text{ cm}} ++ \boxed{7}",
                r"$\{12 cm, 7\}$",
                true,
            ),
            // a box taken back is not part of the answer
            (
                r"\{2, 5\}",
                r"first \boxed{2}, then after checking it again, \boxed{5}",
                false,
            ),
            (r"\boxed{6} no no no no \boxed{3}", r"\boxed{6, 3}", false),
            // a single-answer reference still reads the last box only
            ("5", r"\boxed{2} \text{ and } \boxed{5}", false),
        ],
    );
}

#[test]
fn functions_and_sums() {
    table(
        "functions and sums",
        &[
            (
                r"S_n = \sum_{j=1}^{n} a_j b_{n-j}",
                r"\boxed{S_n = \sum_{j=1}^{n} b_{n-j} a_j}",
                true,
            ),
            (
                r"S_n = \sum_{j=1}^{n} a_j b_{n-j}",
                r"\boxed{S_n = \sum_{j=0}^{n} a_j b_{n-j}}",
                false,
            ),
            (r"\sum_{k=1}^{10} k^2", r"\boxed{385}", true),
            (r"\sum_{k=1}^{10} k^2", r"\boxed{384}", false),
            (r"\prod_{k=1}^{5} k", r"\boxed{120}", true),
            (r"g(t) = t^2 + 1", r"\boxed{g(t) = 1 + t^2}", true),
            (r"g(t) = t^2 + 1", r"\boxed{g(t) = t^2 - 1}", false),
        ],
    );
}

#[test]
fn doubled_backslashes_from_text_escaped_twice() {
    table(
        "doubled backslashes",
        &[
            (r"\\frac{2}{9}", r"\boxed{\frac{2}{9}}", true),
            (r"\frac{2}{9}", r"\\boxed{\\frac{2}{9}}", true),
            (
                r"\\left( 2, \\frac{\\pi}{3} \\right)",
                r"\boxed{(2, \frac{\pi}{3})}",
                true,
            ),
            (r"-1 \\le y \\le 6", r"\boxed{y \in [-1, 6]}", true),
            (r"\\frac{2}{9}", r"\boxed{\frac{2}{7}}", false),
            // a matrix row break is not an escape
            (
                r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}",
                true,
            ),
            (
                r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 & 2 \end{pmatrix}}",
                false,
            ),
        ],
    );
}

#[test]
fn a_worked_solution_as_the_reference() {
    table(
        "worked solutions",
        &[
            (
                r"The sum of the digits is $3 + 4 = 7$, so the answer is $\boxed{7}$.",
                "The answer is 7.",
                true,
            ),
            (
                r"Adding up, we get 12 apples. The answer is 12.",
                r"\boxed{12}",
                true,
            ),
            (
                r"Since $2^5 = 32$, we need $n = 5$. Then the total is $\boxed{37{,}000}$.",
                r"\boxed{37000}",
                true,
            ),
            (
                r"Adding up, we get 12 apples. The answer is 12.",
                r"\boxed{13}",
                false,
            ),
        ],
    );
}

#[test]
fn a_chain_whose_last_value_is_the_answer() {
    table(
        "chains",
        &[
            ("y = 14", r"$y = 6 + 8 = 14$", true),
            ("y = 14", r"$\boxed{y = 2 \cdot 7 = 14}$", true),
            ("w = 2 + 2 = 4", r"$w = 1 + 3 = 4$", true),
            ("y = 1/7", r"$y = 3 - 2 = 1/7 \approx 0.142857$", true),
            ("y = 14", r"$y = 6 + 8 = 15$", false),
            ("y = 14", r"$z = 6 + 8 = 14$", false),
            // found by the symmetry property: an infinite side is no multiple of a finite one
            (r"x = \infty", r"$x = 12,500$", false),
            (r"x = 12,500", r"$x = \infty$", false),
            (r"x = x", r"$x = \sqrt{2}$", false),
            (r"x = \sqrt{2}", r"$x = x$", false),
        ],
    );
}

#[test]
fn final_answer_stated_after_the_boxes() {
    table(
        "final statement",
        &[
            (
                "10920",
                r"Each part gives $\boxed{520}$ and then $\boxed{400}$. Final Answer: The final answer is $10,920$. I hope it is correct.",
                true,
            ),
            (
                "400",
                r"Each part gives $\boxed{520}$ and then $\boxed{400}$. Final Answer: The final answer is $10,920$.",
                false,
            ),
            // an "answer is" that is prose does not override the box
            (
                "400",
                r"So $\boxed{400}$. I hope the answer is correct.",
                true,
            ),
        ],
    );
}

#[test]
fn units_times_and_words_read_one_way() {
    table(
        "units and times",
        &[
            (r"\text{4:30 p.m.}", r"\boxed{4:30 \text{ p.m.}}", true),
            (r"4:30 \text{ p.m.}", r"\boxed{\text{4:30 p.m.}}", true),
            (r"\text{4:30 p.m.}", r"\boxed{4:30pm}", true),
            (r"\text{4:30 p.m.}", r"\boxed{4:30 \text{ a.m.}}", false),
            (r"\text{4:30 p.m.}", r"\boxed{5:30 \text{ p.m.}}", false),
            (r"\text{18 cm}", r"\boxed{18 \text{ cm}}", true),
            (r"18 \mathrm{cm}", r"\boxed{\text{18 cm}}", true),
            (r"18^\circ", r"\boxed{18°}", true),
            (r"\text{18 cm}", r"\boxed{19 \text{ cm}}", false),
            (r"\text{Wednesday}", r"\boxed{\text{wednesday}}", true),
            (r"\text{Wednesday}", r"\boxed{\text{Thursday}}", false),
        ],
    );
}

#[test]
fn braces_without_backslashes_only_group() {
    table(
        "bare braces",
        &[
            ("(2,7)", r"${2,7}$", true),
            (r"\{2,7\}", r"${7,2}$", true),
            // a real set is still not a tuple
            ("(2,7)", r"$\{2,7\}$", false),
            ("(2,7)", r"${7,2}$", false),
        ],
    );
}
