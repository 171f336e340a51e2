"""Runs the ```python blocks of one guide page in one interpreter (started by test_docs.py).

Requests arrive on stdin, one JSON object per line: {"code", "file", "line"}. Each block is
compiled with its page as the file name and its own line numbers, so a traceback points at the
page, and executed in the namespace of a fresh ``__main__`` module, so later blocks see what
earlier ones defined and ``multiprocessing``/``pickle`` find classes and functions by name.
The working directory (the page's work directory) comes first on ``sys.path``.
The answer, {"ok": true} or {"ok": false, "error": traceback}, goes to the file descriptor
named on the command line; the blocks' own output goes to stdout/stderr.
"""

import json
import os
import sys
import traceback
import types


def _serve(requests, answers):
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    for line in requests:
        request = json.loads(line)
        source = "\n" * (request["line"] - 1) + request["code"]
        try:
            exec(compile(source, request["file"], "exec"), main.__dict__)
            answer = {"ok": True}
        except BaseException:  # report everything, including SystemExit
            answer = {"ok": False, "error": traceback.format_exc()}
        sys.stdout.flush()
        sys.stderr.flush()
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    sys.path[0] = os.getcwd()  # as for `python -c`: modules the page wrote are importable
    _serve(sys.stdin, os.fdopen(int(sys.argv[1]), "w"))
