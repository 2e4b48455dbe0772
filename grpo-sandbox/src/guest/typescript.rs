//! TypeScript: its types stripped in the host by SWC's fast stripper (the one Node.js uses
//! for `--experimental-strip-types`), then run as JavaScript.
//!
//! Strip-only mode replaces every annotation with blanks, so line and column numbers in the
//! JavaScript error messages are the TypeScript's own. Syntax that needs code generated
//! (`enum`, `namespace` with values, parameter properties) falls back to SWC's transform
//! mode; there positions may move.

use std::io::Write;
use std::sync::{Arc, Mutex};

use swc_common::errors::Handler;
use swc_common::sync::Lrc;
use swc_common::{GLOBALS, Globals, SourceMap};
use swc_ts_fast_strip::{ErrorCode, Mode, Options, operate};

/// Why a TypeScript program could not be turned into JavaScript (the program's fault).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripError {
    /// The diagnostics, formatted like a compiler's (`error: ...` with the source line).
    pub message: String,
}

/// Strips the types from `source`; `filename` names it in diagnostics.
pub fn strip_types(source: &str, filename: &str) -> Result<String, StripError> {
    match run(source, filename, Mode::StripOnly) {
        Err((ErrorCode::UnsupportedSyntax, _)) => {
            run(source, filename, Mode::Transform).map_err(|(_, message)| StripError { message })
        }
        other => other.map_err(|(_, message)| StripError { message }),
    }
}

#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut held) = self.0.lock() {
            // Diagnostics of a hostile program could be long: keep the first 64 KiB.
            let room = (64usize << 10).saturating_sub(held.len());
            held.extend_from_slice(&buf[..buf.len().min(room)]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn run(source: &str, filename: &str, mode: Mode) -> Result<String, (ErrorCode, String)> {
    let sink = Sink::default();
    let cm: Lrc<SourceMap> = Lrc::default();
    let handler = Handler::with_emitter_writer(Box::new(sink.clone()), Some(cm.clone()));
    let options = Options {
        filename: Some(filename.to_owned()),
        mode,
        ..Options::default()
    };
    let result = GLOBALS.set(&Globals::new(), || {
        operate(&cm, &handler, source.to_owned(), options)
    });
    let diagnostics = sink
        .0
        .lock()
        .map(|held| String::from_utf8_lossy(&held).into_owned())
        .unwrap_or_default();
    match result {
        Ok(output) if diagnostics.is_empty() || !handler.has_errors() => Ok(output.code),
        Ok(_) => Err((ErrorCode::InvalidSyntax, diagnostics)),
        Err(e) => {
            let message = if diagnostics.is_empty() {
                format!("error: {}\n", e.message)
            } else {
                diagnostics
            };
            Err((e.code, message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_become_blanks_and_positions_stay() {
        let ts = "const n: number = 3;\nfunction f(a: number[], b?: string): void { console.log(a, b as string); }\n";
        let js = strip_types(ts, "main.ts").unwrap();
        assert_eq!(js.len(), ts.len());
        assert_eq!(js.lines().count(), ts.lines().count());
        assert!(!js.contains("number"), "{js}");
        assert!(js.contains("const n"));
    }

    #[test]
    fn interfaces_generics_and_non_null_go() {
        let ts = "interface P { x: number }\ntype T = Array<P>;\nconst m = new Map<number, string>();\nlet p!: P;\nconst v = m.get(1)!;\nclass A implements P { private x: number = 1; }\n";
        let js = strip_types(ts, "main.ts").unwrap();
        for gone in [
            "interface",
            "type T",
            "<number, string>",
            "implements",
            "private",
        ] {
            assert!(!js.contains(gone), "{gone} left in {js}");
        }
    }

    #[test]
    fn enums_fall_back_to_transform() {
        let js = strip_types(
            "enum Color { Red, Green }\nconsole.log(Color.Green);\n",
            "main.ts",
        )
        .unwrap();
        assert!(!js.contains("enum "), "{js}");
        assert!(js.contains("Color"));
    }

    #[test]
    fn a_syntax_error_is_a_message() {
        let e = strip_types("let x: = 3;\n", "main.ts").unwrap_err();
        assert!(
            e.message.contains("main.ts") || e.message.contains("error"),
            "{}",
            e.message
        );
    }
}
