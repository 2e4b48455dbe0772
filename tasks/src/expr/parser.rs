//! Tokens and the recursive-descent grammar of arithmetic expressions.

use num_bigint::BigInt;

use crate::error::ExprError;

use super::{Expr, MAX_DEPTH, MAX_LEN, Op};

/// Parses an expression; the whole input must be one expression (see [`Expr::parse`]).
pub(super) fn parse(text: &str) -> Result<Expr, ExprError> {
    if text.len() > MAX_LEN {
        return Err(ExprError::TooLong {
            len: text.len(),
            max: MAX_LEN,
        });
    }
    let tokens = tokenize(text)?;
    if tokens.is_empty() {
        return Err(ExprError::Empty);
    }
    let mut parser = Parser {
        tokens: &tokens,
        pos: 0,
        end: text.len(),
    };
    let expr = parser.sum(0)?;
    if let Some(tok) = parser.peek() {
        return Err(ExprError::UnexpectedToken {
            found: tok.kind.describe(),
            expected: "an operator or the end",
            offset: tok.offset,
        });
    }
    Ok(expr)
}

#[derive(Debug, Clone, PartialEq)]
enum TokKind {
    Num(BigInt),
    Op(Op),
    Open,
    Close,
}

impl TokKind {
    fn describe(&self) -> String {
        match self {
            TokKind::Num(n) => format!("number {n}"),
            TokKind::Op(op) => format!("`{}`", op.symbol()),
            TokKind::Open => "`(`".into(),
            TokKind::Close => "`)`".into(),
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    kind: TokKind,
    offset: usize,
}

fn tokenize(text: &str) -> Result<Vec<Token>, ExprError> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((offset, ch)) = chars.next() {
        let kind = match ch {
            c if c.is_whitespace() => continue,
            '0'..='9' => {
                let mut digits = String::from(ch);
                while let Some(&(_, d)) = chars.peek() {
                    if !d.is_ascii_digit() {
                        break;
                    }
                    digits.push(d);
                    chars.next();
                }
                let n: BigInt = digits
                    .parse()
                    .map_err(|_| ExprError::UnexpectedChar { ch, offset })?;
                TokKind::Num(n)
            }
            '+' => TokKind::Op(Op::Add),
            '-' | '−' => TokKind::Op(Op::Sub),
            '*' | '×' => TokKind::Op(Op::Mul),
            '/' | '÷' => TokKind::Op(Op::Div),
            '(' => TokKind::Open,
            ')' => TokKind::Close,
            _ => return Err(ExprError::UnexpectedChar { ch, offset }),
        };
        tokens.push(Token { kind, offset });
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    end: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn sum(&mut self, depth: usize) -> Result<Expr, ExprError> {
        let mut left = self.product(depth)?;
        while let Some(Token {
            kind: TokKind::Op(op @ (Op::Add | Op::Sub)),
            ..
        }) = self.peek()
        {
            let op = *op;
            self.pos += 1;
            let right = self.product(depth)?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn product(&mut self, depth: usize) -> Result<Expr, ExprError> {
        let mut left = self.unary(depth)?;
        while let Some(Token {
            kind: TokKind::Op(op @ (Op::Mul | Op::Div)),
            ..
        }) = self.peek()
        {
            let op = *op;
            self.pos += 1;
            let right = self.unary(depth)?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, ExprError> {
        if depth > MAX_DEPTH {
            return Err(ExprError::TooDeep { max: MAX_DEPTH });
        }
        let Some(tok) = self.peek().cloned() else {
            return Err(ExprError::UnexpectedToken {
                found: "the end".into(),
                expected: "a number or `(`",
                offset: self.end,
            });
        };
        self.pos += 1;
        match tok.kind {
            TokKind::Num(n) => Ok(Expr::Num(n)),
            TokKind::Op(Op::Sub) => Ok(Expr::Neg(Box::new(self.unary(depth + 1)?))),
            TokKind::Open => {
                let inner = self.sum(depth + 1)?;
                match self.peek() {
                    Some(Token {
                        kind: TokKind::Close,
                        ..
                    }) => {
                        self.pos += 1;
                        Ok(inner)
                    }
                    Some(t) => Err(ExprError::UnexpectedToken {
                        found: t.kind.describe(),
                        expected: "`)`",
                        offset: t.offset,
                    }),
                    None => Err(ExprError::UnexpectedToken {
                        found: "the end".into(),
                        expected: "`)`",
                        offset: self.end,
                    }),
                }
            }
            other => Err(ExprError::UnexpectedToken {
                found: other.describe(),
                expected: "a number or `(`",
                offset: tok.offset,
            }),
        }
    }
}
