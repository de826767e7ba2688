"""Bufferization: tensor-dialect ops to loops-dialect buffers and loop nests.

``bufferize.py`` is the ``bufferize`` pass; ``core.py`` holds what every rule shares
(the rule registry, buffer allocation, loop building); the other modules hold the
rules of one family of tensor ops each (elementwise, fused, dot, reductions, shapes,
indexing, nnet, custom ops, device transfers).
"""
