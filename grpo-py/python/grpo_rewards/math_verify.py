"""Math-Verify's ``parse`` and ``verify``, on the grpo-rs checker: change one import.

    from grpo_rewards.math_verify import parse, verify   # was: from math_verify import ...
    gold = parse("$\\frac{1}{2}$")
    answer = parse("The answer is $\\boxed{0.5}$.")
    assert verify(gold, answer)

Where it differs from Math-Verify:

- ``parse`` returns a list of the extracted answer *texts* (``[]`` when none is found), not
  ``[sympy_expr, text]``; the list remembers the text it was parsed from (``.source``), so
  ``verify(parse(gold), parse(pred))`` checks exactly as ``check_math(gold, pred)`` does: the
  reference read for its final answer (its boxes, its "answer is"), the prediction with every
  extraction rule. ``verify`` also takes plain strings (answers already extracted);
- ``strict=False`` compares answers that differ only in variable names as equal (``f(x)`` and
  ``f(y)``), as Math-Verify's does;
- equivalence is exact arithmetic on rationals (``1/2**99`` never equals ``1/2**98``), with a
  relative tolerance only for irrational values; a decimal equals an exact value when it is that
  value rounded or truncated to the places written (at least 3 significant digits), so
  ``float_rounding`` and ``numeric_precision`` are accepted and not used;
- there is no timeout to set: every check is linear-time with capped sizes and never hangs,
  from any thread (``timeout_seconds`` and ``parsing_timeout`` are accepted and not used);
- ``extraction_config`` is replaced by ``rules``: the extraction rules in priority order
  (``answer_tag``, ``boxed``, ``gsm8k``, ``answer_is``, ``whole``, ``last_math``,
  ``last_number``).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from . import _native

__all__ = ["parse", "verify"]

class Parsed(list):
    """The answers ``parse`` found (a list of texts), with the text they came from
    (``source``; ``None`` when ``parse`` was given other rules)."""

    __slots__ = ("source",)


ParsedLike = Union[str, Sequence[str]]


def parse(
    pred: str,
    extraction_config: Any = None,
    fallback_mode: Any = None,
    extraction_mode: Any = None,
    parsing_timeout: Any = None,
    raise_on_error: bool = False,
    *,
    rules: Optional[Sequence[str]] = None,
) -> Parsed:
    """The final answer in ``pred``, as a one-element list; ``[]`` when there is none."""
    if not isinstance(pred, str):
        raise TypeError(f"pred: expected a string, got {type(pred).__name__}")
    if rules is None:
        found = _native.extract_answer(pred)
        parsed = Parsed() if found is None else Parsed((found,))
        parsed.source = pred
        return parsed
    # With other rules, ``verify`` reads the answers found, not the source.
    found = _native.extract_answer(pred, rules=list(rules))
    parsed = Parsed() if found is None else Parsed((found,))
    parsed.source = None
    return parsed


def _texts(value: ParsedLike, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name}: expected what parse() returns, got {type(value).__name__}") from None
    # Math-Verify's own parse results are [sympy_expr, text]: keep the texts.
    return [v for v in items if isinstance(v, str)]


def verify(
    gold: ParsedLike,
    target: ParsedLike,
    float_rounding: int = 6,
    numeric_precision: int = 15,
    strict: bool = True,
    allow_set_relation_comp: bool = False,
    timeout_seconds: Optional[float] = None,
    raise_on_error: bool = False,
) -> bool:
    """True when any answer of ``target`` is equivalent to the gold answer (its other
    elements are alternatives)."""
    if (type(gold) is Parsed and type(target) is Parsed and gold.source is not None
            and target.source is not None):
        # The common path: both sides from parse() with the default rules.
        return _native.verify_parsed(gold.source, target[0] if target else None,
                                     target.source, not strict)
    return _native.verify_answers(
        _texts(gold, "gold"),
        _texts(target, "target"),
        gold_source=getattr(gold, "source", None),
        answer_source=getattr(target, "source", None),
        rename_variables=not strict,
    )
