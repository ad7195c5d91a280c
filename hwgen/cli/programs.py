"""The options of a pipeline program's job, which the commands that run, profile, estimate or
synthesize a program share, and the job they describe.

Every option comes from the jobs' declarations (:class:`hwgen.kernels.pipeline.Option`): each
built-in and installed program's, and those of a program named on the command line as
``module:Name`` or ``file.py:Name``. An option's flag is its name with dashes
(``frac_bits`` -> ``--frac-bits``); an option named ``seed`` takes the command's ``--seed``.
"""

import re

from ..discovery import is_spec
from ..errors import HwgenError
from ..programs import PROGRAMS
from ..sim import HostModel
from .options import add_option

__all__ = ["add_program_options", "command_line", "job_from_args", "named_programs",
           "option_error", "program_grid", "program_options", "set_command_line"]

_command_line = []


def set_command_line(argv):
    """Note the arguments about to be parsed: a program they name by place (``file.py:Name``)
    adds its options to the parser (and to ``--help``)."""
    _command_line[:] = list(argv)


def command_line():
    """The arguments :func:`set_command_line` noted."""
    return list(_command_line)


def named_programs():
    """``{name: job class}`` of every program the options serve: the registered ones and those
    the command line names by place."""
    programs = {name: PROGRAMS[name] for name in PROGRAMS}
    for text in _command_line:
        if is_spec(text) and text not in programs:
            try:
                if text in PROGRAMS:
                    programs[text] = PROGRAMS[text]
            except HwgenError:
                pass    # said in one line when the command reads its PROGRAM
    return programs


def program_options(programs):
    """``{option name: [(program name, Option)]}`` over ``programs``, in declaration order."""
    options = {}
    for name, job in programs.items():
        for option in job.options:
            options.setdefault(option.name, []).append((job.name if is_spec(name) else name,
                                                        option))
    return options


def _boolean(text):
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


def _said(declared, what):
    values = {getattr(option, what) if what != "default" else option.default
              for _, option in declared}
    if len(values) == 1:
        return str(values.pop())
    return "; ".join(f"{name} {getattr(option, what)}" for name, option in declared)


def add_program_options(parser, *, host=True, lists=False):
    """The options every program declares (read by :func:`job_from_args`) and, with ``host``,
    those of its host. With ``lists``, each takes a comma-separated list (a design space)."""
    group = parser.add_argument_group("program options (`hwgen list` says which program takes "
                                      "which)")
    for name, declared in program_options(named_programs()).items():
        if name == "seed":
            continue
        option = declared[0][1]
        kind = {bool: _boolean, int: int, float: float, str: str}[option.type]
        helps = "; ".join(f"{program}: {o.help} ({o.allowed})" for program, o in declared)
        add_option(group, option.flag, dest=f"program_{name}", default=None,
                   type=str if lists else kind, metavar=("LIST" if lists else name.upper()),
                   help=helps + (" (comma-separated)" if lists else ""),
                   shown=_said(declared, "default"))
    if host:
        add_option(group, "--launch-delay", type=int, default=HostModel().launch_delay_cycles,
                   metavar="CYCLES", help="host cycles to start one thread")


def given_options(args, kind, name):
    """``{option: value}`` the command line gives ``kind`` (program ``name``); a value for an
    option ``kind`` does not declare is refused in one line."""
    declared = {option.name for option in kind.options}
    values = {}
    for key, value in vars(args).items():
        if not key.startswith("program_") or value is None:
            continue
        option = key[len("program_"):]
        if option not in declared:
            takers = [program for program, _ in program_options(named_programs())[option]]
            flag = "--" + option.replace("_", "-")
            raise HwgenError(f"{flag} applies to {', '.join(takers)}, not {name}")
        values[option] = value
    if "seed" in declared and getattr(args, "seed", None) is not None:
        values["seed"] = args.seed
    return values


def program_grid(args, kind):
    """``{option: [values]}`` the program options give ``kind`` as comma-separated lists."""
    convert = {int: int, float: float, str: str,
               bool: lambda text: {"true": True, "false": False}[text.lower()]}
    grid = {}
    for name, text in given_options(args, kind, kind.name).items():
        option = kind.option(name)
        if isinstance(text, int):       # --seed
            grid[name] = [text]
            continue
        try:
            values = [convert[option.type](item.strip()) for item in text.split(",")]
        except (KeyError, ValueError):
            raise HwgenError(f"{option.flag} must be a comma-separated list of "
                             f"{option.type.__name__} values, not {text!r}") from None
        if len(set(values)) != len(values):
            raise HwgenError(f"{option.flag} lists a value twice: {text!r}")
        grid[name] = values
    return grid


def option_error(error, kind):
    """A job's ``ValueError``/``TypeError`` as the command line says it: each option the
    message names spelled as its flag (the leading one, and any with an underscore)."""
    message = str(error)
    names = {option.name: option.flag for option in kind.options}
    head, _, rest = message.partition(" ")
    if head in names:
        message = f"{names[head]} {rest}"
    for option, flag in names.items():
        if "_" in option:
            message = re.sub(rf"(?<![\w-]){option}\b", flag, message)
    return HwgenError(message)


def make_job(kind, values):
    """``kind(**values)``, its refusals as one-line :class:`HwgenError` s; a refused option the
    user left out is said to be its default (``--lanes`` 4 against ``--dim 6``)."""
    try:
        return kind(**values)
    except (TypeError, ValueError) as error:
        refusal = option_error(error, kind)
    flag = str(refusal).split(" ", 1)[0]
    defaulted = [option for option in kind.options
                 if option.flag == flag and option.name not in values]
    if defaulted:
        refusal = HwgenError(f"{refusal} ({defaulted[0].default} is the default of {flag}: "
                             f"give {flag})")
    raise refusal


def job_from_args(args, program=None):
    """The job (program, data and numpy model) the options describe, of ``program`` (default
    the PROGRAM argument)."""
    program = args.program if program is None else program
    kind = PROGRAMS.get_or_error(program)
    return make_job(kind, given_options(args, kind, kind.name))
