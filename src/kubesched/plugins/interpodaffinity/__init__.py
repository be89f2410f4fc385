"""InterPodAffinity: required and preferred pod (anti-)affinity (upstream
pkg/scheduler/framework/plugins/interpodaffinity, v1.36).

Modules: ``terms`` (parsed terms and matching), ``counts`` (counts per
topology pair), ``index`` (the table's pods grouped for fast PreFilter /
PreScore), ``filtering`` (PreFilter, AddPod / RemovePod, exact Filter),
``scoring`` (PreScore, exact Score, NormalizeScore), ``vector`` (Filter and
Score over a NodeTable), ``hints`` (events and queueing hints), ``plugin``
(the class).
"""

from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    PRE_FILTER_STATE_KEY,
)
from kubesched.plugins.interpodaffinity.plugin import InterPodAffinity
from kubesched.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InterPodAffinity",
]
