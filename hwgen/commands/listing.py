"""``hwgen list``: the kernels (and their parameters) hwgen can build."""

import json

from ..catalog import KERNELS
from ..versions import tool_versions

__all__ = ["register"]


def register(subparsers):
    parser = subparsers.add_parser("list", help="list kernels and their parameters",
                                   description="List the kernels hwgen can build.")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    parser.set_defaults(func=run)


def run(args):
    kernels = [info.to_json() for info in KERNELS.values()]
    if args.json:
        print(json.dumps({"tool_versions": tool_versions(), "kernels": kernels}, indent=2))
        return 0
    print("kernels:")
    for info in KERNELS.values():
        print(f"  {info.name:10} {info.description}")
    print("kernel parameters (options of build, sim):")
    for name, spec in next(iter(KERNELS.values())).parameters().items():
        allowed = spec["allowed"]
        allowed = ", ".join(map(str, allowed)) if isinstance(allowed, list) else allowed
        print(f"  {name:12} default {spec['default']}; {allowed}")
    return 0
