"""Atheris (libFuzzer for Python) target: tschema's in-place marker parser on arbitrary bytes.

Properties checked on every input, any failure (or any exception) is a finding:
- decode/encode and split_lines keep the bytes exactly;
- parse_regions never raises: marker mistakes are diagnostics, each on a line of the file;
- without diagnostics the regions are in order, do not overlap, and hold their custom block;
- rendering regenerates the regions and keeps every line outside them; rendering the result
  again changes nothing, and it parses to the same region names.

Run by scripts/fuzz.sh: python3 fuzz/fuzz_tschema_markers.py CORPUS_DIR -max_total_time=N
"""

import sys

import atheris

with atheris.instrument_imports(include=["ferry.tschema"]):
    from ferry.tschema import inplace

KNOWN = {"A", "B", "Node", "GlobalVarNode"}


def known(name):
    return None if name in KNOWN else f"unknown node {name!r}"


def generate(region):
    return [f"// generated for {region.name}", "", "int x;"]


def check(data: bytes) -> None:
    text = inplace.decode(data)
    assert inplace.encode(text) == data, "decode/encode lost bytes"
    lines = inplace.split_lines(text)
    assert "".join(lines) == text, "split_lines lost text"
    regions, errors = inplace.parse_regions("fuzz.cc", lines, known)
    for e in errors:
        assert 1 <= e.line <= max(len(lines), 1), (e.line, len(lines))
    if errors:
        return
    last = -1
    for r in regions:
        assert last < r.start < r.stop < len(lines), (last, r.start, r.stop)
        if r.custom is not None:
            assert r.start < r.custom_start < r.custom_stop < r.stop
            assert r.custom == "".join(lines[r.custom_start : r.custom_stop + 1])
        last = r.stop
    out = inplace.render(lines, regions, generate)
    out_lines = inplace.split_lines(out)
    again, again_errors = inplace.parse_regions("fuzz.cc", out_lines, known)
    assert not again_errors, again_errors
    assert [r.name for r in again] == [r.name for r in regions]
    kept = list(inplace.outside_regions(lines, regions).values())
    assert list(inplace.outside_regions(out_lines, again).values()) == kept
    assert inplace.render(out_lines, again, generate) == out, "render is not idempotent"


def main():
    atheris.Setup(sys.argv, lambda data: check(bytes(data)))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
