"""The ip4frag case (test/replay/ip4frag/case.py: inputs, RFC 791 model,
counters) with ip4frag on an lcore of its own: the fragments cross a ring
to tx, and the replicas are counted all the same."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "ip4frag_case", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ip4frag",
                                 "case.py"))
_case = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_case)

inputs, expected, COUNTERS = _case.inputs, _case.expected, _case.COUNTERS
