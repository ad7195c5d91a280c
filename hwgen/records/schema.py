"""The version stamp of the JSON files hwgen's commands write, and the check of it on reading.

Every record file says what it is and in which version of its layout: ``"schema"`` (such as
``"hwgen.sim"``) and ``"schema_version"`` (an integer that grows when a key changes meaning or
goes away; new keys do not change it). A reader refuses a file of a schema it does not know or
of a newer version than it reads, rather than guessing at its keys.
"""

__all__ = ["SchemaError", "check_schema", "schema_of", "stamp"]


class SchemaError(ValueError):
    """A JSON object that is not of the schema, or of a newer version than this hwgen reads."""


def stamp(name, version, obj):
    """``obj`` with ``"schema": name`` and ``"schema_version": version`` first."""
    return {"schema": name, "schema_version": version, **obj}


def schema_of(obj):
    """``(schema, version)`` of a JSON object, ``(None, None)`` when it carries no stamp."""
    if not isinstance(obj, dict) or "schema" not in obj:
        return None, None
    name, version = obj["schema"], obj.get("schema_version")
    if not isinstance(name, str) or isinstance(version, bool) or not isinstance(version, int):
        raise SchemaError(f"schema must be a name and schema_version an integer, not "
                          f"{name!r} and {version!r}")
    return name, version


def check_schema(obj, name, version):
    """Raise :class:`SchemaError` unless ``obj`` is stamped ``name`` of at most ``version``."""
    found, found_version = schema_of(obj)
    if found != name:
        raise SchemaError(f"not a {name} record (schema {found!r})")
    if found_version > version:
        raise SchemaError(f"{name} version {found_version} was written by a newer hwgen; this "
                          f"one reads up to version {version}: upgrade hwgen")
