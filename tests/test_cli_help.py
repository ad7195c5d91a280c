"""Every command's --help says each option's default once, and only what applies to it."""

import argparse
import re

import pytest

from hwgen.cli.main import make_parser


def _subparsers():
    parser = make_parser()
    (choices,) = [a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return choices


def _entries(help_text):
    """``{option: its help, wrapped lines joined}`` of a --help text."""
    entries, current = {}, None
    for line in help_text.splitlines():
        match = re.match(r"  (-{1,2}[\w-]+)", line)
        if match:
            current = match[1]
            entries[current] = line
        elif current and line.startswith("      "):
            entries[current] += " " + line.strip()
        else:
            current = None
    return {option: re.sub(r"\s+", " ", text) for option, text in entries.items()}


COMMANDS = sorted(_subparsers())


@pytest.mark.parametrize("command", COMMANDS)
def test_each_option_says_its_default_once(command):
    parser = _subparsers()[command]
    entries = _entries(parser.format_help())
    flags = {option for action in parser._actions if action.nargs == 0
             for option in action.option_strings}
    assert entries
    for option, text in entries.items():
        assert text.count("(default:") <= 1, text
        assert not re.search(r"default: (None|True|False)\)", text), text
        if option not in flags or "--no-" in option:
            assert "(default:" in text, f"{command} {option}: no default said: {text}"


@pytest.mark.parametrize("command", COMMANDS)
def test_only_a_command_that_reads_an_image_mentions_one(command):
    parser = _subparsers()[command]
    text = parser.format_help()
    takes_image = "--input" in _entries(text)
    for option, entry in _entries(text).items():
        if not takes_image:
            assert "image's" not in entry and "random image" not in entry \
                and "input image" not in entry, f"{command} {option}: {entry}"


def test_run_seeds_the_matrices_and_the_memory_not_an_image():
    seed = _entries(_subparsers()["run"].format_help())["--seed"]
    assert "image" not in seed and "matrices" in seed and "(default: 0)" in seed


def test_synth_and_estimate_say_what_they_measure():
    for command in ("synth", "estimate"):
        text = _entries(_subparsers()[command].format_help())["--no-instrument"]
        assert "bare PE" in text and "(default: the PE with its HMM, as `build` writes it)" in text
