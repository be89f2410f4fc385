"""Image names as the node table keys them (the scheduler cache's image states)."""

from __future__ import annotations

from kubesched.api.types import Node

DEFAULT_IMAGE_TAG = "latest"


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` when the name has no tag (upstream normalizedImageName)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":" + DEFAULT_IMAGE_TAG
    return name


def node_image_sizes(node: Node) -> dict[str, int]:
    """Normalized image name -> size for every name of every image on the node."""
    out: dict[str, int] = {}
    for image in node.images:
        for name in image.names:
            out[normalized_image_name(name)] = image.size_bytes
    return out
