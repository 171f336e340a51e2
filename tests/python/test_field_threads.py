"""Writes of one field of a shared object from Python threads and C++ threads at once
(docs/reflection.md, "Threads")."""

import os
import subprocess
import sys
import textwrap


def test_python_and_cpp_threads_writing_one_field_never_double_free():
    # SetAttr assigned an object field with a plain `field = value`: a C++ thread (the GIL
    # released) and a Python attribute assignment could both release the old object.
    code = textwrap.dedent("""
        import sys, threading, ferry
        import ferry_testing
        from ferry_testing import IntImm
        f = ferry.get_global_func
        sys.setswitchinterval(1e-5)
        node = ferry.make_node("test.Mutable", count=0, small=0, label="", expr=None, items=[])
        probe = IntImm(42)
        before = f("test.use_count")(probe)
        values = [probe, IntImm(1), None]
        labels = ["short", "a label long enough to be a String object"]

        def python_writer():
            for i in range(50_000):
                node.expr = values[i % 3]
                node.label = labels[i % 2]
                node.items = [probe] if i % 2 else []

        writer = threading.Thread(target=python_writer)
        writer.start()
        f("test.set_attr_in_threads")(node, "expr", values, 4, 50_000)
        f("test.set_attr_in_threads")(node, "label", labels, 4, 50_000)
        f("test.set_attr_in_threads")(node, "items", [[probe, probe], []], 4, 50_000)
        writer.join()
        assert node.label in labels
        node.expr = None
        node.items = []
        assert f("test.use_count")(probe) == before, (f("test.use_count")(probe), before)
        print("ok")
    """)
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=240,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["ok"]
