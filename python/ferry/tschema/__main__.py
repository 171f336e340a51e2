"""The `tschema` command: ``python -m ferry.tschema {generate,check,dump,build} SCHEMA...
[options]``.

Exit codes: 0 success (for `check`: everything up to date), 1 stale files (`check`),
2 errors in the schema, the C++ files or the command line. Errors are printed as
``file:line: what``, never as a traceback.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from typing import List, Optional

from . import driver
from .dump import dumps
from .errors import SchemaError
from .loader import load_schema

EXIT_STALE = 1
EXIT_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tschema",
        description="Generate and check C++ and Python code from a tschema "
        "schema, and build it into a library.",
        epilog="The guide is tschema.md in the directory `python -m ferry --docs` prints "
        "(installed with the package).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def outputs(p: argparse.ArgumentParser) -> None:
        p.add_argument("schemas", nargs="+", metavar="SCHEMA", help="schema files (.py)")
        p.add_argument(
            "--header",
            help="whole-file C++ header to write the node and reference "
            "classes into (nodes without an in-place region)",
        )
        p.add_argument(
            "--source",
            help="C++ registration source to write "
            "(FERRY_REGISTER_NODE_TYPE and the <type_key>.__init__ globals)",
        )
        p.add_argument("--python", help="Python module of register_object classes to write")
        p.add_argument("--pyi", help="stub to write (default: --python with .pyi)")
        p.add_argument("--rust", help="Rust module of typed node references to write")
        p.add_argument(
            "--in-place",
            nargs="+",
            default=[],
            metavar="FILE",
            help="C++ files whose '// tschema:' regions are regenerated",
        )
        p.add_argument(
            "--scan",
            nargs="+",
            default=[],
            metavar="FILE",
            help="hand-written C++ files to check (registrations, type keys)",
        )
        p.add_argument(
            "--include",
            action="append",
            default=[],
            metavar="HEADER",
            help="extra #include for the header and the source (repeatable)",
        )
        p.add_argument("--guard", help="include guard of --header (default: from its path)")
        p.add_argument("-q", "--quiet", action="store_true", help="print only errors")

    outputs(sub.add_parser("generate", help="write the outputs whose bytes change"))
    outputs(sub.add_parser("check", help="exit 1 with a unified diff when an output is stale"))
    b = sub.add_parser(
        "build",
        help="compile the schema's C++ (and --source files) into "
        "lib<name>.so with ferry.cpp.build; prints where the library is",
    )
    b.add_argument("schemas", nargs="+", metavar="SCHEMA", help="schema files (.py)")
    b.add_argument(
        "--source",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help='hand-written C++ files (they may #include "<name>_schema.h")',
    )
    b.add_argument(
        "-o",
        "--output",
        metavar="lib<name>.so",
        help="copy the library here (default: leave it in the cache)",
    )
    b.add_argument(
        "--name",
        help="library name (default: from -o, else the first schema's "
        "file name without .py and a trailing _schema)",
    )
    b.add_argument(
        "-I",
        "--include-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="extra include directory (repeatable)",
    )
    b.add_argument("--cflags", default="", help="extra compiler flags, one string")
    b.add_argument("--ldflags", default="", help="extra linker flags, one string")
    b.add_argument("-v", "--verbose", action="store_true", help="show the build's commands")
    dump = sub.add_parser("dump", help="print the schema as JSON")
    dump.add_argument("schemas", nargs="+", metavar="SCHEMA")
    dump.add_argument("-o", "--output", help="write to this file instead of stdout")
    return parser


def _options(args: argparse.Namespace) -> driver.Options:
    return driver.Options(
        schemas=args.schemas,
        header=args.header,
        source=args.source,
        python=args.python,
        pyi=args.pyi,
        rust=args.rust,
        in_place=args.in_place,
        scan=args.scan,
        includes=args.include,
        guard=args.guard,
    )


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "dump":
            text = dumps(load_schema(args.schemas))
            if args.output:
                driver.write([driver.Output(args.output, _read(args.output), text.encode("utf-8"))])
            else:
                sys.stdout.write(text)
            return 0
        if args.command == "build":
            return _build(args)
        _, outputs = driver.plan(_options(args))
        if args.command == "check":
            stale = driver.diff(outputs)
            if stale:
                sys.stdout.write(stale)
                names = [o.path for o in outputs if o.changed]
                print(
                    f"tschema: {len(names)} file(s) out of date: {', '.join(names)}; run "
                    "`python -m ferry.tschema generate` with the same arguments",
                    file=sys.stderr,
                )
                return EXIT_STALE
            if not args.quiet:
                print(f"tschema: {len(outputs)} file(s) up to date", file=sys.stderr)
            return 0
        written = driver.write(outputs)
        if not args.quiet:
            for path in written:
                print(f"tschema: wrote {path}")
        return 0
    except SchemaError as e:
        for d in e.diagnostics:
            print(str(d), file=sys.stderr)
        print(f"tschema: {len(e.diagnostics)} error(s); no file was written", file=sys.stderr)
        return EXIT_ERROR
    except OSError as e:
        print(f"tschema: error: {e}", file=sys.stderr)
        return EXIT_ERROR


def _library_name(args: argparse.Namespace) -> str:
    if args.name:
        return args.name
    if args.output:
        base = os.path.basename(args.output)
        if base.startswith("lib") and base.endswith(".so") and len(base) > 6:
            return base[3:-3]
        raise ValueError(
            f"cannot tell the library name from -o {args.output} (expected "
            "lib<name>.so); give --name"
        )
    stem = os.path.splitext(os.path.basename(args.schemas[0]))[0]
    return stem[: -len("_schema")] if stem.endswith("_schema") and stem != "_schema" else stem


def _build(args: argparse.Namespace) -> int:
    """`tschema build`: ferry.cpp.build, then a copy to -o (atomically)."""
    try:
        from .. import cpp  # needs the compiled ferry package (tschema alone does not)
    except ImportError as e:
        print(
            f"tschema: error: build needs the ferry package with its extension: {e}",
            file=sys.stderr,
        )
        return EXIT_ERROR
    try:
        name = _library_name(args)
        path = cpp.build(
            name,
            args.source,
            schema=args.schemas,
            include_dirs=args.include_dir,
            extra_cflags=args.cflags,
            extra_ldflags=args.ldflags,
            verbose=args.verbose,
        )
    except (cpp.BuildError, ValueError, TypeError) as e:
        print(f"tschema: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    if args.output:
        target = os.path.abspath(args.output)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-", suffix=".so")
        os.close(fd)
        try:
            shutil.copyfile(path, tmp)
            os.chmod(tmp, 0o755)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        path = args.output
    print(path)
    return 0


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
