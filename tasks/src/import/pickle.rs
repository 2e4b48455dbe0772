//! A data-only reader of Python pickles: strings, bytes, integers, floats, lists, tuples,
//! dicts, `None` and booleans, with the memo and protocol-4 frames. Every opcode that names
//! or calls code (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ`,
//! `EXT*`, persistent ids, out-of-band buffers) is refused: reading a pickle never runs or
//! names a Python object, whatever the file holds.
//!
//! Why not `serde-pickle`: it resolves a fixed set of globals (`builtins.set`, `frozenset`,
//! `bytearray`, `list`, `int`, `_codecs.encode`, `copy_reg._reconstructor`, …) and applies
//! `REDUCE` and `BUILD` to them, so a pickle that names code reads as data there; it refuses
//! only the globals it does not know. This reader's promise is the stronger one, that every
//! opcode naming code is an error, and no option of that crate gives it.
//!
//! ```
//! use grpo_tasks::import::pickle::loads;
//! // pickle.dumps("hi", protocol=4)
//! let bytes = b"\x80\x04\x95\x06\x00\x00\x00\x00\x00\x00\x00\x8c\x02hi\x94.";
//! assert_eq!(loads(bytes).unwrap(), serde_json::json!("hi"));
//! // pickle.dumps(print) names a global: refused.
//! let err = loads(b"\x80\x04\x8c\x08builtins\x8c\x05print\x93.").unwrap_err();
//! assert!(err.to_string().contains("STACK_GLOBAL"));
//! ```

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

/// Why a pickle could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pickle byte {offset}: {message}")]
pub struct PickleError {
    /// The byte offset of the opcode at fault.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// Containers nested deeper than this are refused (a pickle can even make a list hold itself).
const MAX_DEPTH: usize = 256;

/// One object built by the pickle; containers hold the ids of their items.
#[derive(Debug, Clone)]
enum Obj {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<usize>),
    Tuple(Vec<usize>),
    Dict(Vec<(usize, usize)>),
}

/// A stack slot: an object, or a MARK.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Obj(usize),
    Mark,
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    at: usize,
    objs: Vec<Obj>,
    stack: Vec<Slot>,
    memo: HashMap<u64, usize>,
}

/// Reads a pickle of plain data as JSON: tuples become lists, bytes that are UTF-8 become
/// strings, dict keys must be strings or integers (written as text).
pub fn loads(data: &[u8]) -> Result<Value, PickleError> {
    let mut m = Machine {
        data,
        pos: 0,
        at: 0,
        objs: Vec::new(),
        stack: Vec::new(),
        memo: HashMap::new(),
    };
    let root = m.run()?;
    m.to_json(root, 0)
}

impl Machine<'_> {
    fn err(&self, message: impl Into<String>) -> PickleError {
        PickleError {
            offset: self.at,
            message: message.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], PickleError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| self.err("the pickle ends inside an opcode"))?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn uint(&mut self, n: usize) -> Result<u64, PickleError> {
        let bytes = self.take(n)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn len(&mut self, n: usize) -> Result<usize, PickleError> {
        let len = self.uint(n)?;
        usize::try_from(len).map_err(|_| self.err("length out of range"))
    }

    fn line(&mut self) -> Result<String, PickleError> {
        let rest = &self.data[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| self.err("a text argument without its newline"))?;
        let text = String::from_utf8(rest[..end].to_vec())
            .map_err(|_| self.err("a text argument that is not UTF-8"))?;
        self.pos += end + 1;
        Ok(text)
    }

    fn push(&mut self, obj: Obj) {
        self.objs.push(obj);
        self.stack.push(Slot::Obj(self.objs.len() - 1));
    }

    fn pop(&mut self) -> Result<usize, PickleError> {
        match self.stack.pop() {
            Some(Slot::Obj(id)) => Ok(id),
            Some(Slot::Mark) => Err(self.err("a MARK where an object was expected")),
            None => Err(self.err("the stack is empty")),
        }
    }

    fn top(&self) -> Result<usize, PickleError> {
        match self.stack.last() {
            Some(Slot::Obj(id)) => Ok(*id),
            _ => Err(self.err("no object on the stack")),
        }
    }

    /// The objects above the topmost MARK, the MARK removed.
    fn pop_mark(&mut self) -> Result<Vec<usize>, PickleError> {
        let mark = self
            .stack
            .iter()
            .rposition(|s| matches!(s, Slot::Mark))
            .ok_or_else(|| self.err("no MARK on the stack"))?;
        let items = self.stack.split_off(mark + 1);
        self.stack.pop();
        Ok(items
            .into_iter()
            .filter_map(|s| match s {
                Slot::Obj(id) => Some(id),
                Slot::Mark => None,
            })
            .collect())
    }

    fn text(&self, bytes: Vec<u8>) -> Result<Obj, PickleError> {
        String::from_utf8(bytes)
            .map(Obj::Str)
            .map_err(|_| self.err("a string that is not UTF-8"))
    }

    fn memo_put(&mut self, key: u64) -> Result<(), PickleError> {
        let id = self.top()?;
        self.memo.insert(key, id);
        Ok(())
    }

    fn memo_get(&mut self, key: u64) -> Result<(), PickleError> {
        let id = *self
            .memo
            .get(&key)
            .ok_or_else(|| self.err(format!("memo entry {key} was never stored")))?;
        self.stack.push(Slot::Obj(id));
        Ok(())
    }

    fn append(&mut self, list: usize, items: Vec<usize>) -> Result<(), PickleError> {
        match &mut self.objs[list] {
            Obj::List(v) => {
                v.extend(items);
                Ok(())
            }
            _ => Err(self.err("APPEND to something that is not a list")),
        }
    }

    fn set_items(&mut self, dict: usize, items: Vec<usize>) -> Result<(), PickleError> {
        if !items.len().is_multiple_of(2) {
            return Err(self.err("SETITEMS with an odd number of objects"));
        }
        let pairs: Vec<(usize, usize)> = items.chunks(2).map(|p| (p[0], p[1])).collect();
        match &mut self.objs[dict] {
            Obj::Dict(v) => {
                v.extend(pairs);
                Ok(())
            }
            _ => Err(self.err("SETITEM on something that is not a dict")),
        }
    }

    fn int_line(&mut self, long: bool) -> Result<Obj, PickleError> {
        let line = self.line()?;
        let digits = if long {
            line.strip_suffix('L').unwrap_or(&line)
        } else {
            &line
        };
        if !long && digits == "00" {
            return Ok(Obj::Bool(false));
        }
        if !long && digits == "01" {
            return Ok(Obj::Bool(true));
        }
        digits
            .parse::<i128>()
            .map(Obj::Int)
            .map_err(|_| self.err(format!("integer {digits:?} out of range")))
    }

    fn long(&mut self, n: usize) -> Result<Obj, PickleError> {
        let len = self.len(n)?;
        if len > 16 {
            return Err(self.err(format!("a {len}-byte integer is out of range")));
        }
        let bytes = self.take(len)?;
        let mut buf = [if bytes.last().is_some_and(|b| b & 0x80 != 0) {
            0xff
        } else {
            0
        }; 16];
        buf[..len].copy_from_slice(bytes);
        Ok(Obj::Int(i128::from_le_bytes(buf)))
    }

    fn run(&mut self) -> Result<usize, PickleError> {
        loop {
            self.at = self.pos;
            let op = *self.take(1)?.first().unwrap_or(&0);
            match op {
                b'.' => return self.pop(),
                0x80 => {
                    let proto = self.uint(1)?;
                    if proto > 5 {
                        return Err(self.err(format!("unknown protocol {proto}")));
                    }
                }
                0x95 => {
                    self.uint(8)?;
                }
                b'(' => self.stack.push(Slot::Mark),
                b'N' => self.push(Obj::None),
                0x88 => self.push(Obj::Bool(true)),
                0x89 => self.push(Obj::Bool(false)),
                b'I' => {
                    let obj = self.int_line(false)?;
                    self.push(obj);
                }
                b'L' => {
                    let obj = self.int_line(true)?;
                    self.push(obj);
                }
                b'J' => {
                    let v = self.uint(4)? as u32 as i32;
                    self.push(Obj::Int(i128::from(v)));
                }
                b'K' => {
                    let v = self.uint(1)?;
                    self.push(Obj::Int(i128::from(v)));
                }
                b'M' => {
                    let v = self.uint(2)?;
                    self.push(Obj::Int(i128::from(v)));
                }
                0x8a => {
                    let obj = self.long(1)?;
                    self.push(obj);
                }
                0x8b => {
                    let obj = self.long(4)?;
                    self.push(obj);
                }
                b'F' => {
                    let line = self.line()?;
                    let v = line
                        .trim()
                        .parse::<f64>()
                        .map_err(|_| self.err(format!("float {line:?} does not parse")))?;
                    self.push(Obj::Float(v));
                }
                b'G' => {
                    let bits = self.take(8)?;
                    let mut buf = [0u8; 8];
                    buf.copy_from_slice(bits);
                    self.push(Obj::Float(f64::from_be_bytes(buf)));
                }
                // Python 2 strings (protocols 0 to 2) and Python 3 str.
                b'T' | b'U' | b'X' | 0x8c | 0x8d | b'B' | b'C' | 0x8e | 0x96 => {
                    let width = match op {
                        b'U' | 0x8c | b'C' => 1,
                        b'T' | b'X' | b'B' => 4,
                        _ => 8,
                    };
                    let n = self.len(width)?;
                    let bytes = self.take(n)?.to_vec();
                    let obj = match op {
                        b'X' | 0x8c | 0x8d => self.text(bytes)?,
                        // Python 2 `str`: bytes, read as text when they are UTF-8.
                        b'T' | b'U' => match String::from_utf8(bytes) {
                            Ok(s) => Obj::Str(s),
                            Err(e) => Obj::Bytes(e.into_bytes()),
                        },
                        _ => Obj::Bytes(bytes),
                    };
                    self.push(obj);
                }
                b'V' => {
                    let line = self.line()?;
                    if line.contains('\\') {
                        return Err(self.err("escaped protocol-0 unicode strings are not read"));
                    }
                    self.push(Obj::Str(line));
                }
                b']' => self.push(Obj::List(Vec::new())),
                b')' => self.push(Obj::Tuple(Vec::new())),
                b'}' => self.push(Obj::Dict(Vec::new())),
                b'l' => {
                    let items = self.pop_mark()?;
                    self.push(Obj::List(items));
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Obj::Tuple(items));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.pop()?);
                    }
                    items.reverse();
                    self.push(Obj::Tuple(items));
                }
                b'd' => {
                    let items = self.pop_mark()?;
                    self.push(Obj::Dict(Vec::new()));
                    let dict = self.top()?;
                    self.set_items(dict, items)?;
                }
                b'a' => {
                    let item = self.pop()?;
                    let list = self.top()?;
                    self.append(list, vec![item])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    let list = self.top()?;
                    self.append(list, items)?;
                }
                b's' => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    let dict = self.top()?;
                    self.set_items(dict, vec![key, value])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let dict = self.top()?;
                    self.set_items(dict, items)?;
                }
                b'0' => {
                    self.stack
                        .pop()
                        .ok_or_else(|| self.err("POP on an empty stack"))?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let top = self.top()?;
                    self.stack.push(Slot::Obj(top));
                }
                b'p' => {
                    let line = self.line()?;
                    let key = line
                        .parse()
                        .map_err(|_| self.err(format!("memo key {line:?}")))?;
                    self.memo_put(key)?;
                }
                b'q' => {
                    let key = self.uint(1)?;
                    self.memo_put(key)?;
                }
                b'r' => {
                    let key = self.uint(4)?;
                    self.memo_put(key)?;
                }
                0x94 => {
                    let key = self.memo.len() as u64;
                    self.memo_put(key)?;
                }
                b'g' => {
                    let line = self.line()?;
                    let key = line
                        .parse()
                        .map_err(|_| self.err(format!("memo key {line:?}")))?;
                    self.memo_get(key)?;
                }
                b'h' => {
                    let key = self.uint(1)?;
                    self.memo_get(key)?;
                }
                b'j' => {
                    let key = self.uint(4)?;
                    self.memo_get(key)?;
                }
                other => {
                    return Err(self.err(match refused_name(other) {
                        Some(name) => format!(
                            "opcode {name} builds or names a Python object; only plain data is read"
                        ),
                        None => format!("unknown or unsupported opcode 0x{other:02x}"),
                    }));
                }
            }
        }
    }

    fn to_json(&self, id: usize, depth: usize) -> Result<Value, PickleError> {
        if depth > MAX_DEPTH {
            return Err(PickleError {
                offset: self.data.len(),
                message: format!("containers nested deeper than {MAX_DEPTH}"),
            });
        }
        let whole = |message: String| PickleError {
            offset: self.data.len(),
            message,
        };
        Ok(match &self.objs[id] {
            Obj::None => Value::Null,
            Obj::Bool(b) => Value::Bool(*b),
            Obj::Int(i) => {
                if let Ok(v) = i64::try_from(*i) {
                    Value::from(v)
                } else if let Ok(v) = u64::try_from(*i) {
                    Value::from(v)
                } else {
                    return Err(whole(format!("integer {i} does not fit in 64 bits")));
                }
            }
            Obj::Float(f) => Number::from_f64(*f)
                .map(Value::Number)
                .ok_or_else(|| whole(format!("float {f} has no JSON form")))?,
            Obj::Str(s) => Value::String(s.clone()),
            Obj::Bytes(b) => Value::String(
                String::from_utf8(b.clone())
                    .map_err(|_| whole("bytes that are not UTF-8".into()))?,
            ),
            Obj::List(items) | Obj::Tuple(items) => Value::Array(
                items
                    .iter()
                    .map(|&i| self.to_json(i, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Obj::Dict(pairs) => {
                let mut map = Map::new();
                for &(k, v) in pairs {
                    let key = match &self.objs[k] {
                        Obj::Str(s) => s.clone(),
                        Obj::Int(i) => i.to_string(),
                        _ => {
                            return Err(whole(
                                "a dict key that is not a string or an integer".into(),
                            ));
                        }
                    };
                    map.insert(key, self.to_json(v, depth + 1)?);
                }
                Value::Object(map)
            }
        })
    }
}

/// The names of the opcodes refused because they name or build Python objects.
fn refused_name(op: u8) -> Option<&'static str> {
    Some(match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        b'S' => "STRING",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_data_of_every_protocol() {
        // pickle.dumps([1, -2, 300, 70000, 2**40, -2**63, 1.5, None, True, "é", (1, 2),
        //               {"a": [3]}, b"x"], protocol=4)
        let p4 = b"\x80\x04\x95L\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01J\xfe\xff\xff\xffM,\x01Jp\x11\x01\x00\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80G?\xf8\x00\x00\x00\x00\x00\x00N\x88\x8c\x02\xc3\xa9\x94K\x01K\x02\x86\x94}\x94\x8c\x01a\x94]\x94K\x03asC\x01x\x94e.";
        assert_eq!(
            loads(p4).unwrap(),
            json!([1, -2, 300, 70000, 1u64 << 40, i64::MIN, 1.5, null, true, "é", [1, 2], {"a": [3]}, "x"])
        );
        // pickle.dumps([1, True, 0.25, "ab", "ab"], protocol=0): text opcodes and a memo.
        let p0 = b"(lp0\nI1\naI01\naF0.25\naVab\np1\nag1\na.";
        assert_eq!(loads(p0).unwrap(), json!([1, true, 0.25, "ab", "ab"]));
        // pickle.dumps([1, 2**70], protocol=4): beyond 64 bits.
        let big = b"\x80\x04\x95\x12\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01\x8a\t\x00\x00\x00\x00\x00\x00\x00\x00@e.";
        assert!(loads(big).unwrap_err().message.contains("64 bits"));
    }

    #[test]
    fn shared_and_self_referencing_objects() {
        // a = [1, 2]; pickle.dumps([a, a], protocol=4): `a` is filled after it is memoized.
        let shared = b"\x80\x04\x95\x0f\x00\x00\x00\x00\x00\x00\x00]\x94(]\x94(K\x01K\x02eh\x01e.";
        assert_eq!(loads(shared).unwrap(), json!([[1, 2], [1, 2]]));
        // l = []; l.append(l); pickle.dumps(l, protocol=4)
        let cyclic = b"\x80\x04\x95\x06\x00\x00\x00\x00\x00\x00\x00]\x94h\x00a.";
        let err = loads(cyclic).unwrap_err();
        assert!(err.message.contains("deeper"), "{err}");
    }

    #[test]
    fn broken_pickles_are_errors() {
        for (bytes, want) in [
            (&b""[..], "ends inside"),
            (b"\x80\x04\x8c\x05ab", "ends inside"),
            (b"\x80\x04h\x03.", "never stored"),
            (b"\x80\x04a.", "stack is empty"),
            (b"\x80\x04K\x01R.", "REDUCE"),
            (b"\x80\x04\x81.", "NEWOBJ"),
            (b"\x80\x04\xff.", "unknown"),
        ] {
            let err = loads(bytes).unwrap_err();
            assert!(err.message.contains(want), "{bytes:?}: {err}");
        }
    }
}
