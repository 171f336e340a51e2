"""Every route from a schema to Python classes gives the same classes: constructor signature,
defaults, repr and docstrings agree between

- ``ferry.tschema.register(SCHEMA)`` with nothing compiled (types registered at run time),
- ``tschema build SCHEMA -o lib.so``, ``ferry.load_library``, then ``register(SCHEMA)``,
- ``ferry.cpp.load(name, [], schema=SCHEMA)`` (its generated module),
- ``tschema generate --python`` (the module a project checks in), with the library loaded.

Each route runs in a process of its own (one process holds one registration per type key)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCHEMA = '''
from ferry.tschema import Object, declare, ty


@declare
class ShapeNode(Object):
    """A named shape.

    Attributes
    ----------
    name
        What it is called.
    """

    type_key = "routes.Shape"
    name: ty.String


@declare
class CircleNode(ShapeNode):
    """A circle."""

    type_key = "routes.Circle"
    mutable = True
    radius: ty.double = 1.0
    tags: ty.Array[ty.String] = []
    center: ty.Optional[ShapeNode] = None
'''

PROBE = """
import inspect, json, sys
import ferry, ferry.cpp, ferry.tschema

route = sys.argv[1]
if route == "register":
    ns = ferry.tschema.register("routes_schema.py")
elif route == "library":
    ferry.load_library(sys.argv[2])
    ns = ferry.tschema.register("routes_schema.py")
elif route == "cpp.load":
    ns = ferry.cpp.load("routes", [], schema="routes_schema.py")
elif route == "generate":
    ferry.load_library(sys.argv[2])
    sys.path.insert(0, ".")
    import routes_generated as ns
out = {}
for name in ("Shape", "Circle"):
    cls = getattr(ns, name)
    out[name] = {"signature": str(inspect.signature(cls)), "doc": inspect.getdoc(cls)}
c = ns.Circle("unit")
out["repr"] = repr(c)
out["defaults"] = [c.name, c.radius, list(c.tags), c.center]
out["positional"] = repr(ns.Circle("p", 2.5, ["a"], ns.Shape("s")))
# make_node applies the schema defaults on every route, a compiled C++ node's too (its
# registration records them), and still names a field without one.
out["make_node"] = repr(ferry.make_node("routes.Circle", name="m"))
try:
    ferry.make_node("routes.Circle", radius=2.0)
except ValueError as e:
    out["make_node_missing"] = str(e).splitlines()[0]
print(json.dumps(out))
"""


def _run(args, cwd):
    done = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=600, env=os.environ.copy()
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def routes(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("routes")
    (cwd / "routes_schema.py").write_text(SCHEMA)
    (cwd / "probe.py").write_text(textwrap.dedent(PROBE))
    lib = str(cwd / "libroutes_cli.so")
    tschema = [sys.executable, "-m", "ferry.tschema"]
    _run(tschema + ["build", "routes_schema.py", "--name", "routes_cli", "-o", lib], cwd)
    _run(tschema + ["generate", "routes_schema.py", "--python", "routes_generated.py"], cwd)
    found = {}
    for route, extra in (
        ("register", []),
        ("library", [lib]),
        ("cpp.load", []),
        ("generate", [lib]),
    ):
        found[route] = json.loads(_run([sys.executable, "probe.py", route] + extra, cwd))
    return found


def test_every_route_gives_the_same_classes(routes):
    reference = dict(routes["cpp.load"])
    for route, found in routes.items():
        assert found == reference, route


def test_the_classes_take_positional_arguments_and_apply_schema_defaults(routes):
    found = routes["register"]
    assert found["Circle"]["signature"] == (
        "(name: 'str', radius: 'float' = 1.0, tags: 'typing.Sequence[str]' = (), "
        "center: 'typing.Optional[Shape]' = None) -> 'None'"
    )
    assert found["defaults"] == ["unit", 1.0, [], None]
    assert found["Shape"]["doc"].startswith("A named shape.")
    assert found["Circle"]["doc"] == "A circle."
    assert found["make_node"] == reference_make_node
    assert "missing fields: name" in found["make_node_missing"]


reference_make_node = 'routes.Circle(name="m", radius=1.0, tags=[], center=None)'


def test_make_node_of_a_compiled_schema_type_applies_the_schema_defaults(routes):
    for route in ("library", "cpp.load", "generate"):
        assert routes[route]["make_node"] == reference_make_node, route
        assert "missing fields: name" in routes[route]["make_node_missing"], route
