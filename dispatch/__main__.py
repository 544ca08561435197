"""``python -m dispatch [--import MODULE ...] QUALNAME ...``: print computed dispatch tables.

Imports: the standard library and ``dispatch``.  Operators are defined by the
modules that use the dispatcher, so name them with ``--import`` (for example
``--import tensor`` for the built-in ``core`` operators).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import dump_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dispatch", description="Print the computed dispatch table of operators."
    )
    parser.add_argument(
        "--import",
        dest="modules",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first, to register its operators (repeatable), e.g. tensor",
    )
    parser.add_argument("qualnames", nargs="+", metavar="QUALNAME", help="e.g. core::add.Tensor")
    options = parser.parse_args(argv)
    for module in options.modules:
        importlib.import_module(module)
    status = 0
    for qualname in options.qualnames:
        try:
            print(dump_table(qualname))
        except KeyError as e:
            print(f"python -m dispatch: {e.args[0]}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
