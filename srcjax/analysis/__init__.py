"""Analyses over normalized IR, shared by the transforms.

Each module answers one question about a normalized function body and changes
nothing in it:

- :mod:`.activity`: which names carry a derivative (and which may hold
  Python containers), for forward and reverse mode.
- :mod:`.liveness`: which names a block reads before writing them (vmap's
  carried values of batched branches and loops).
"""
