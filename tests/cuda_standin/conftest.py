# The stand-in's pycuda modules act when imported (autoinit makes a context): they are imported
# by the tests that install the stand-in, never collected.
collect_ignore = ["site"]
