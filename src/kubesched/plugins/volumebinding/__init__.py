"""VolumeBinding: the pod's PersistentVolumeClaims bound or bindable on the node.

``binder`` decides (upstream binder.go); ``plugin`` is the extension points
(upstream volume_binding.go).
"""

from kubesched.plugins.volumebinding.plugin import VolumeBinding

__all__ = ["VolumeBinding"]
