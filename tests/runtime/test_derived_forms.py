"""The runtime's forms of a plugin declaring its reads (runtime/derived_forms.py).

A ``DerivedFilterPlugin`` / ``DerivedScorePlugin`` has no vectorised code of its
own: the runtime's ``Derived`` answers for it, one per plugin shared by its
Filter and Score points, and its static / spec-determined standing comes from
its ``Reads`` for the pod (``static_for``).
"""

from __future__ import annotations

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeSet
from kubesched.framework.reads import Reads
from kubesched.plugins.tainttoleration import TaintToleration
from kubesched.runtime.derived_forms import DerivedAnswers, FilterForms, static_for
from tests.builders import build_table, make_node, make_pod
from tests.fakes import FakeHandle


def test_static_for_follows_the_reads() -> None:
    assert not static_for(None)
    assert static_for(Reads(taints=True))
    assert not static_for(Reads(host_ports=True))


def test_one_derived_per_plugin_answers_filter_and_score() -> None:
    table = build_table(
        [
            make_node("a").obj(),
            make_node("b").taint("k", "v", "NoSchedule").obj(),
            make_node("c").taint("k", "v", "PreferNoSchedule").obj(),
        ]
    )
    pl = TaintToleration(None, FakeHandle(table))
    answers = DerivedAnswers()
    assert answers.of(pl.name) is answers.of(pl.name)
    forms = FilterForms.of(pl, answers)
    assert forms.vector is not None and forms.static_vector is forms.vector
    assert forms.spec_determined and forms.reads is not None
    assert forms.rows is None and forms.what_if is None

    state = CycleState()
    pod = make_pod("p").info()
    v = forms.vector(state, pod, table)
    assert v is not None
    rows = [table.row_of[n] for n in ("a", "b", "c")]
    got = [int(v.index[r]) for r in rows]
    assert got[0] < 0 and got[1] >= 0 and got[2] < 0
    for name, r in zip(("a", "b", "c"), rows, strict=True):
        info = table.infos[r]
        assert info is not None
        want = pl.filter(state, pod, info)
        i = int(v.index[r])
        assert (i < 0) == want.is_success(), name

    vector, slots = answers.score_forms(pl)
    assert vector is not None and slots is not None
    nodes = NodeSet(table, np.array(rows, dtype=np.int64))
    assert pl.pre_score(state, pod, nodes).is_success()
    scores = vector(state, pod, nodes)
    assert scores is not None
    assert scores.tolist() == [100, 100, 0]


def test_a_plugin_without_reads_gets_no_derived_forms() -> None:
    class Plain:
        name = "Plain"

    assert DerivedAnswers().score_forms(Plain()) == (None, None)
