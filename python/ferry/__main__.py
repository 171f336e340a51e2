"""`python -m ferry --cmake-dir | --include-dir | --lib-dir | --lib-path | --version`."""

import argparse
import sys

from . import __version__, libinfo


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ferry", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--cmake-dir", action="store_true", help="the ferryConfig.cmake directory")
    group.add_argument("--include-dir", action="store_true", help="the C++ include directory")
    group.add_argument("--lib-dir", action="store_true", help="the directory of libferry")
    group.add_argument("--lib-path", action="store_true", help="the path of libferry")
    group.add_argument("--version", action="store_true", help="the Ferry version")
    args = parser.parse_args(argv)
    try:
        if args.cmake_dir:
            print(libinfo.cmake_dir())
        elif args.include_dir:
            print(libinfo.include_dir())
        elif args.lib_dir:
            print(libinfo.lib_dir())
        elif args.lib_path:
            print(libinfo.lib_path())
        else:
            print(__version__)
    except RuntimeError as e:
        print(f"python -m ferry: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
