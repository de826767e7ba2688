"""The strict PyCUDA stand-in of the tests (``tests/cuda_standin``): not PyCUDA."""
VERSION = (2026, 1)
VERSION_STATUS = ""
VERSION_TEXT = "2026.1"
