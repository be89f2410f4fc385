"""Domain data of the Kubernetes API that scheduling needs.

May contain: typed objects (Pod, Node, PriorityClass, PodDisruptionBudget, ...),
pure functions over them (quantities, selectors, tolerations, effective pod
requests), loading from YAML/JSON with clear errors, and API-server admission.
Must not contain: scheduling decisions, I/O other than reading input
documents, or imports of any other kubesched layer.
"""
