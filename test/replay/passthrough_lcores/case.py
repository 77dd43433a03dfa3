"""The pass-through case (test/replay/passthrough/case.py: inputs, identity
model, counters) with tx on an lcore of its own: every burst crosses the
xc -> tx ring, where out_port must hold what xconnect's hint stood for."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "passthrough_case", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                     "passthrough", "case.py"))
_case = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_case)

inputs, expected, COUNTERS = _case.inputs, _case.expected, _case.COUNTERS
