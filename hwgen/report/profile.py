"""The section of a line profile's JSON: source lines shaded by the share of the cycles they
were active in, as the HMM paper's tool colours them.

The JSON holds ``cycles`` (of the profiled job), ``lines`` (``file``, ``line``, ``code``,
``active_cycles``, ``percent`` each) and optionally ``steps`` (a list of records, shown as a
table) and the usual ``parameters`` and ``tool_versions``.
"""

from .blocks import Column, Figure, Headline, Section, Source, SourceFile, SourceLine, Table
from .figures import line_bars, to_svg
from .performance import provenance
from .sections import register
from .values import Value, integer, percent, plain

__all__ = ["profile_section"]

# Lines in the figure of the busiest.
_BUSIEST = 12


def _source(lines, cycles):
    top = max((line.get("percent") or 0 for line in lines), default=0)
    files = {}
    for line in sorted(lines, key=lambda l: (l["file"], l["line"])):
        active, share = line.get("active_cycles"), line.get("percent")
        details = (f"{line['file']}:{line['line']}: active in "
                   + (f"{active:,}" if active is not None else "n/a") + " of "
                   + (f"{cycles:,}" if cycles is not None else "n/a") + " cycles ("
                   + (f"{share:.1f}%" if share is not None else "n/a") + ")")
        files.setdefault(line["file"], []).append(SourceLine(
            line["line"], line.get("code", ""), (share or 0) / top if top else 0.0,
            [integer(active), percent(share)], details))
    return [SourceFile(name, shown) for name, shown in files.items()]


def _steps_table(steps):
    if all(isinstance(step, dict) for step in steps):
        names = list(dict.fromkeys(name for step in steps for name in step))
        return Table("Steps", [Column(name, numeric=False) for name in names],
                     [[plain(step.get(name)) for name in names] for step in steps])
    return Table("Steps", [Column("step", numeric=False)], [[plain(step)] for step in steps])


@register("profile", lambda data: "lines" in data and isinstance(data["lines"], list))
def profile_section(data, source):
    lines, cycles = data["lines"], data.get("cycles")
    busiest = sorted(lines, key=lambda l: -(l.get("active_cycles") or 0))[:_BUSIEST]
    blocks = [Headline([
        ("cycles", integer(cycles, "cycles")), ("source lines", integer(len(lines))),
        ("busiest line", Value(f"{busiest[0]['file']}:{busiest[0]['line']}") if busiest
         else Value("none")),
        ("its share", percent(busiest[0].get("percent")) if busiest else percent(None))])]
    if busiest:
        title = "Busiest source lines"
        bars = [(f"{l['file'].rsplit('/', 1)[-1]}:{l['line']}", l.get("active_cycles") or 0)
                for l in busiest]
        blocks.append(Figure(title, to_svg(line_bars(title, bars,
                                                     xlabel="cycles the line was active")),
                             "The lines active in the most clock cycles.", name="busiest-lines"))
    blocks.append(Source("Source lines", [Column("active", "cycles"), Column("share", "%")],
                         _source(lines, cycles),
                         "Each line shaded by its share of the job's cycles (darkest: the "
                         "busiest line); hover over a line for its figures."))
    if data.get("steps"):
        blocks.append(_steps_table(data["steps"]))
    blocks.append(provenance(data))
    return Section("profile", "profile: " + str(data.get("design") or data.get("kernel")
                                                 or data.get("program") or "source lines"),
                   "active cycles per source line", source, blocks)
