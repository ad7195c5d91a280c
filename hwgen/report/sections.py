"""Section renderers: one per kind of JSON a command writes, found by what the JSON holds.

A renderer is a function ``render(data, source) -> Section`` registered with :func:`register`
and a test of the JSON's keys. Adding a command's page section is registering one more::

    @register("profile", lambda data: "lines" in data)
    def profile_section(data, source):
        return Section(...)
"""

from dataclasses import dataclass

__all__ = ["Renderer", "register", "renderer_for", "kinds"]


@dataclass(frozen=True)
class Renderer:
    kind: str
    matches: callable
    render: callable


_RENDERERS = []


def register(kind, matches):
    """Register the decorated ``render(data, source)`` for JSON objects where
    ``matches(data)`` holds; renderers are tried in the order they were registered."""
    def decorator(render):
        if any(r.kind == kind for r in _RENDERERS):
            raise ValueError(f"a section renderer for {kind!r} is already registered")
        _RENDERERS.append(Renderer(kind, matches, render))
        return render
    return decorator


def renderer_for(data):
    """The renderer of a JSON object, or None when no renderer knows it."""
    if not isinstance(data, dict):
        return None
    return next((r for r in _RENDERERS if r.matches(data)), None)


def kinds():
    """The kinds of JSON the registered renderers know."""
    return [r.kind for r in _RENDERERS]
