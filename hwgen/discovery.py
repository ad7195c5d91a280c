"""Finding user kernels and programs: ``module:Name``, ``file.py:Name`` and entry points.

A kernel or a program is named on the command line by its registered name (the built-in ones,
and those an installed package declares under an entry-point group, ``hwgen.kernels`` or
``hwgen.programs``) or by where it lives: ``package.module:Name`` (an importable module) or
``path/to/file.py:Name`` (a file, loaded once as a module of its own).
"""

import hashlib
import importlib
import importlib.util
import inspect
import sys
import warnings
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from .errors import HwgenError

__all__ = ["Registry", "is_spec", "load_spec"]


def is_spec(text):
    """Whether ``text`` names an object by place (``module:Name`` or ``file.py:Name``)."""
    return isinstance(text, str) and ":" in text and not text.endswith(":")


def _module_from_file(path):
    path = Path(path).resolve()
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    name = f"hwgen_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would, so dataclasses and pickling find it.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_spec(spec, what):
    """The object ``spec`` (``module:Name`` or ``file.py:Name``) names; ``what`` (``PROGRAM``,
    ``KERNEL``) says in an error which argument it was."""
    place, _, attribute = spec.rpartition(":")
    try:
        if place.endswith(".py"):
            if not Path(place).is_file():
                raise HwgenError(f"{what} {spec}: no file {place}")
            module = _module_from_file(place)
        else:
            module = importlib.import_module(place)
    except HwgenError:
        raise
    except ImportError as error:
        raise HwgenError(f"{what} {spec}: cannot import {place}: {error}") from None
    target = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise HwgenError(f"{what} {spec}: {place} has no {attribute!r}")
        target = getattr(target, part)
    return target


def spec_of(obj):
    """``module:Name`` (or ``file.py:Name`` for a file loaded by :func:`load_spec`) of a class."""
    module = sys.modules.get(obj.__module__)
    if obj.__module__.startswith("hwgen_user_") and module is not None:
        return f"{inspect.getfile(module)}:{obj.__qualname__}"
    return f"{obj.__module__}:{obj.__qualname__}"


class Registry(Mapping):
    """The kernels or programs hwgen knows by name, plus any named by place.

    Parameters
    ----------
    what : str
        The argument it names, for errors (``PROGRAM``, ``KERNEL``).
    builtin : dict
        Name to object, shipped with hwgen.
    group : str
        The entry-point group installed packages add to.
    accepts : function of object -> bool
        Whether a loaded object is of the kind (a job class, a kernel).
    kind : str
        The kind in words, for errors.
    """
    def __init__(self, what, builtin, *, group, accepts, kind):
        self._what = what
        self._builtin = dict(builtin)
        self._group = group
        self._accepts = accepts
        self._kind = kind
        self._named = None
        self._by_spec = {}

    @property
    def group(self):
        return self._group

    def _names(self):
        if self._named is None:
            named = dict(self._builtin)
            for point in metadata.entry_points(group=self._group):
                if point.name in named:
                    warnings.warn(f"entry point {point.name} ({point.value}) of {self._group} "
                                  f"is shadowed by the {self._kind} of that name")
                    continue
                try:
                    loaded = point.load()
                except Exception as error:     # a broken plugin must not break hwgen
                    warnings.warn(f"entry point {point.name} ({point.value}) of {self._group} "
                                  f"failed to load: {error}")
                    continue
                if not self._accepts(loaded):
                    warnings.warn(f"entry point {point.name} ({point.value}) of {self._group} is "
                                  f"not a {self._kind}")
                    continue
                named[point.name] = loaded
            self._named = named
        return self._named

    def by_spec(self, spec):
        """The object ``spec`` names, or ``None`` when it is not a :attr:`kind`."""
        if spec not in self._by_spec:
            loaded = load_spec(spec, self._what)
            self._by_spec[spec] = loaded if self._accepts(loaded) else None
        return self._by_spec[spec]

    def __getitem__(self, name):
        names = self._names()
        if name in names:
            return names[name]
        if is_spec(name):
            found = self.by_spec(name)
            if found is not None:
                return found
            raise HwgenError(f"{self._what} {name} is not a {self._kind}")
        raise KeyError(name)

    def __contains__(self, name):
        if not isinstance(name, str):
            return False
        return name in self._names() or (is_spec(name) and self.by_spec(name) is not None)

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def name_of(self, obj):
        """The name a registered object is known by, else its ``module:Name``."""
        for name, known in self._names().items():
            if known is obj:
                return name
        return spec_of(obj)

    def get_or_error(self, name):
        """``self[name]``, or :class:`HwgenError` naming what is allowed."""
        if is_spec(name) and name not in self._names():
            return self[name]       # says what the object it names is not
        if name not in self:
            raise HwgenError(f"{self._what} must be one of {', '.join(self)}, not {name!r} (or "
                             f"a {self._kind} named as module:Name or file.py:Name)")
        return self[name]
