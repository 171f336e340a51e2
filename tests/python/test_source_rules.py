"""Rules of the C++ sources that a compiler does not check.

Every `catch (...)` in libferry, its headers and the extension must let thread cancellation
through (abi::__forced_unwind: pthread_cancel, pthread_exit, CPython ending a thread at exit);
swallowing it aborts the process with "FATAL: exception not rethrown". So the handler's first
statement rethrows (`FERRY_RETHROW_FORCED_UNWIND();`, the extension's `RethrowIfForcedUnwind();`)
or the handler ends in a plain `throw;`. Exceptions: a `try { throw; } catch ...` that classifies
the exception of an enclosing handler, which has already let cancellation through, and the
handlers listed in ALLOWED, whose guarded code cannot be cancelled.
"""

import re

from ferry_testing import ROOT

RETHROWS = ("FERRY_RETHROW_FORCED_UNWIND();", "RethrowIfForcedUnwind();", "throw;")

# file -> the text of the line after the handler, with the reason it may stay as it is.
ALLOWED = {
    # SetRaisedFromCurrentException (noexcept) guards building an Error from the exception its
    # caller handles (callers let cancellation through first); FerryErrorSetRaisedFromCStr
    # guards building an Error from two strings. Neither calls a cancellation point.
    (
        "src/error.cc",
        "// Building the error itself failed (out of memory): keep whatever was raised before, and",
    ),
    ("src/error.cc", "ferry::details::SetRaisedFromCurrentException();"),
}


def sources():
    for folder in ("src", "include", "python/src"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".cc", ".h"):
                yield path


def test_every_catch_all_lets_thread_cancellation_through():
    bad = []
    checked = 0
    for path in sources():
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if not re.search(r"catch \(\.\.\.\)", line) or line.strip().startswith("//"):
                continue
            checked += 1
            nxt = next((ln.strip().rstrip("\\").strip() for ln in lines[i + 1 :] if ln.strip()), "")
            if nxt in RETHROWS or (str(path.relative_to(ROOT)), nxt) in ALLOWED:
                continue
            # A handler that cleans up and rethrows: `throw;` within its first lines.
            if any(ln.strip() == "throw;" for ln in lines[i + 1 : i + 4]):
                continue
            # A classifying `try { throw; } catch (...)`: find the `try {` this catch closes.
            depth, j = 0, i
            while j > 0:
                j -= 1
                if re.match(r"\s*try \{", lines[j]) and depth == 0:
                    break
                depth += lines[j].count("}") - lines[j].count("{")
            after_try = next((ln.strip() for ln in lines[j + 1 : i] if ln.strip()), "")
            if after_try == "throw;":
                continue
            bad.append(f"{path.relative_to(ROOT)}:{i + 1}: {line.strip()} -> {nxt}")
    assert checked >= 15, checked  # the scan found the handlers
    assert not bad, "catch (...) without FERRY_RETHROW_FORCED_UNWIND() first:\n" + "\n".join(bad)


# The rule "Return values" of c_api.h: every exported function returns int, but these four.
C_API_NOT_INT = {
    "FerryErrorSetRaised": "void",
    "FerryErrorSetRaisedFromCStr": "void",
    "FerryErrorMoveFromRaised": "void",
    "FerryErrorBuiltinKinds": "const char* const*",
}


def test_every_c_api_function_returns_int_but_the_four_named():
    text = (ROOT / "include/ferry/c_api.h").read_text()
    declared = re.findall(r"^FERRY_DLL\s+(.+?)\s*\b(Ferry\w+)\(", text, re.M)
    assert len(declared) > 40, "the declarations were not found"
    returns = {name: " ".join(ret.split()) for ret, name in declared}
    others = {name: ret for name, ret in returns.items() if name in C_API_NOT_INT}
    assert others == C_API_NOT_INT
    assert {name: ret for name, ret in returns.items() if ret != "int"} == C_API_NOT_INT


def test_cmake_lists_every_library_source():
    # The libraries' sources are listed in CMake (so a subproject build sees no glob); a file
    # added to src/ or python/src/ without its line would be left out of the library.
    for cmake, folder in (("CMakeLists.txt", "src"), ("python/CMakeLists.txt", "python/src")):
        text = (ROOT / cmake).read_text()
        block = re.search(r"set\((FERRY_SOURCES|FERRY_PY_SOURCES)\n(.*?)\)", text, re.S)
        assert block, f"{cmake}: the source list was not found"
        listed = sorted(block.group(2).split())
        prefix = "src/"
        on_disk = sorted(prefix + p.name for p in (ROOT / folder).glob("*.cc"))
        assert listed == on_disk, f"{cmake} lists {listed}, {folder}/ holds {on_disk}"
