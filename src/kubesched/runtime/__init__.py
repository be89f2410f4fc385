"""Runs the plugins of a profile, one generic runner per extension point.

May contain: building plugin instances from a profile and a registry, and
running each extension point (filters with nominated pods, weighted scores,
PreFilter add/remove extensions). Must not name a concrete plugin.
Imports only ``kubesched.framework`` and ``kubesched.api``.
"""
