//! A checker with testlib pasted in instead of included: the pasted copy is swapped for the
//! shipped `testlib.h`.
//!
//! Polygon and Codeforces checkers are often one file, testlib's text first. That text needs
//! C++ exceptions (`try`/`catch` around `std::stoll`), which the sandbox does not build, so
//! the region from testlib's include guard (`#ifndef _TESTLIB_H_` / `#define _TESTLIB_H_`) to
//! its matching `#endif` becomes `#include "testlib.h"`: the shipped copy, testlib 0.9.44
//! without exceptions (see `vendor/testlib/`). The lines of the checker's own code keep their
//! text; only their numbers in messages move.

/// The source with a pasted testlib replaced by an include of the shipped one, or `None`
/// when it has none (or the guard has no matching `#endif`).
pub fn unpaste(source: &str) -> Option<String> {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let directive = |line: &str| -> Option<String> {
        let rest = line.trim_start().strip_prefix('#')?;
        Some(rest.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let start = lines.windows(2).position(|pair| {
        directive(pair[0]).as_deref() == Some("ifndef _TESTLIB_H_")
            && directive(pair[1]).as_deref() == Some("define _TESTLIB_H_")
    })?;
    let mut depth = 0usize;
    let mut end = None;
    for (index, line) in lines.iter().enumerate().skip(start) {
        let Some(d) = directive(line) else { continue };
        if d.starts_with("if") {
            depth += 1;
        } else if d.starts_with("endif") {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                end = Some(index);
                break;
            }
        }
    }
    let end = end?;
    let mut out = String::with_capacity(source.len());
    out.extend(lines[..start].iter().copied());
    out.push_str("#include \"testlib.h\"\n");
    out.extend(lines[end + 1..].iter().copied());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_copy_becomes_an_include() {
        let source = "// checker\n#ifndef _TESTLIB_H_\n#define _TESTLIB_H_\n#ifdef X\n#  if Y\n#  endif\n#endif\nint testlib_body;\n#endif\n#include <cstdio>\nint main() { return 0; }\n";
        assert_eq!(
            unpaste(source).as_deref(),
            Some(
                "// checker\n#include \"testlib.h\"\n#include <cstdio>\nint main() { return 0; }\n"
            )
        );
    }

    #[test]
    fn sources_without_a_whole_copy_are_left_alone() {
        assert_eq!(unpaste("#include \"testlib.h\"\nint main() {}\n"), None);
        assert_eq!(
            unpaste("#ifndef _TESTLIB_H_\n#define _TESTLIB_H_\nint x;\n"),
            None
        );
        assert_eq!(unpaste("#ifndef OTHER_H\n#define OTHER_H\n#endif\n"), None);
    }
}
