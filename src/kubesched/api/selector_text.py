"""Label selectors written as kubectl takes them (``-l``): ``app=web``,
``tier!=db``, ``env in (a,b)``, ``env notin (c)``, ``release``, ``!canary``,
comma-separated and ANDed (apimachinery ``labels.Parse``, the operators a
``metav1.LabelSelector`` can express).

``parse_selector_text`` returns the equivalent ``LabelSelector``
(``=``/``==`` -> In, ``!=`` -> NotIn, which also matches objects without the
key, as upstream) or raises ``ValueError`` naming what is wrong.
"""

from __future__ import annotations

import re
from typing import Final

from kubesched.api.selectors import label_key_errors, label_value_errors
from kubesched.api.types import LabelSelector, LabelSelectorRequirement

_TERM: Final = re.compile(
    r"\s*(?:!\s*(?P<absent>[^\s,!=()]+)"
    r"|(?P<key>[^\s,!=()]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[^\s,()]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^()]*)\)|))\s*(?:,|$)"
)


def parse_selector_text(text: str) -> LabelSelector:
    exprs: list[LabelSelectorRequirement] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TERM.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"unable to parse requirement: found {text[pos:]!r}")
        pos = m.end()
        if m["absent"]:
            exprs.append(_req(m["absent"], "DoesNotExist", ()))
        elif m["op"]:
            op = "NotIn" if m["op"] == "!=" else "In"
            exprs.append(_req(m["key"], op, (m["value"],)))
        elif m["set"]:
            values = tuple(v.strip() for v in m["values"].split(","))
            if not all(values):
                raise ValueError(f"{m['key']}: empty value in ({m['values']})")
            exprs.append(_req(m["key"], "In" if m["set"] == "in" else "NotIn", values))
        else:
            exprs.append(_req(m["key"], "Exists", ()))
    return LabelSelector(match_expressions=tuple(exprs))


def _req(key: str, op: str, values: tuple[str, ...]) -> LabelSelectorRequirement:
    errors = label_key_errors(key)
    for v in values:
        errors += label_value_errors(v)
    if errors:
        raise ValueError(f"{key}: {'; '.join(errors)}")
    return LabelSelectorRequirement(key, op, values)
