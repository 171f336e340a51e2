"""Where the installed Ferry keeps what a C++ build, a shell or a reader needs.

Ferry shares one set of objects and functions between C++ and Python. `python -m ferry` prints
one of: the directory of its CMake package config (for `-Dferry_DIR=` or `CMAKE_PREFIX_PATH`),
of its C++ headers, of libferry, libferry's path, the version, or the directory of the
documentation pages (README.md is their index; python.md the Python guide, tschema.md the schema
tool)."""

import argparse
import sys

from . import __version__, libinfo


def main(argv=None):
    summary, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        prog="python -m ferry",
        description=f"{summary} {details}",
        epilog="example: cmake -S . -B build -Dferry_DIR=$(python -m ferry --cmake-dir)",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--cmake-dir", action="store_true", help="the ferryConfig.cmake directory")
    group.add_argument("--include-dir", action="store_true", help="the C++ include directory")
    group.add_argument("--lib-dir", action="store_true", help="the directory of libferry")
    group.add_argument("--lib-path", action="store_true", help="the path of libferry")
    group.add_argument("--version", action="store_true", help="the Ferry version")
    group.add_argument(
        "--docs", action="store_true", help="the directory of the documentation (README.md first)"
    )
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
        elif args.docs:
            print(libinfo.docs_dir())
        else:
            print(__version__)
    except RuntimeError as e:
        print(f"python -m ferry: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
