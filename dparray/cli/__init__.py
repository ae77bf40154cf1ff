"""``python -m dparray`` (also the ``dparray`` command): ``info``, ``demo`` and ``bench``.

Bad input -- an unknown or unavailable backend, an unwritable output folder, a missing optional
package -- ends with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from dparray._system import available_cores
from dparray.cli import bench, demo, info
from dparray.cli.workloads import REAL_PROGRAMS, WORKLOADS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dparray", description="dparray: deep learning on the array API, data-parallel.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="versions, backends, BLAS, cores and GPUs",
                        description=info.__doc__)
    run = commands.add_parser("demo", help="train an MLP on handwritten digits",
                              description=demo.__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--backend", default="numpy", help="backend name (default: numpy)")
    run.add_argument("--workers", type=int, default=available_cores(),
                     help=f"DataParallel workers (default: the cores, {available_cores()})")
    run.add_argument("--epochs", type=int, default=20, help="training epochs (default: 20)")
    run.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    run.add_argument("--out", default="dparray-demo",
                     help="folder for the weights and the plot (default: dparray-demo)")
    timing = commands.add_parser("bench", help="a quick DataParallel ratio table (< 1 min)",
                                 description=bench.__doc__)
    names = ",".join(name for name in WORKLOADS if name not in REAL_PROGRAMS)
    timing.add_argument("--workloads", default=names,
                        help=f"comma-separated subset of {','.join(WORKLOADS)} (default: "
                             f"{names}; {','.join(REAL_PROGRAMS)} are real programs' models)")
    timing.add_argument("--rounds", type=int, default=3, help="timed rounds (default: 3)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "info":
            return info.run()
        if args.command == "demo":
            return demo.run(args.backend, args.workers, args.epochs, args.seed, args.out)
        return bench.run(args.workloads.split(","), args.rounds)
    except (ValueError, TypeError, RuntimeError, OSError, ImportError) as error:
        print(f"dparray: error: {error}", file=sys.stderr)
        return 2

