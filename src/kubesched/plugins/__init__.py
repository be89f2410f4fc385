"""In-tree plugins, one module (or subpackage) per upstream plugin, named after it.

Plugins never import each other or the runtime; shared logic lives in
``kubesched.framework``. Each plugin class has ``name`` equal to upstream's
plugin name and implements the extension-point Protocols of
``kubesched.framework.interfaces``.
"""
