"""Analyses over normalized IR, shared by the transforms.

Each module answers one question about a normalized function body and changes
nothing in it:

- :mod:`.activity`: which names carry a derivative (and which may hold
  Python containers), for forward and reverse mode.
- :mod:`.liveness`: which names a block reads before writing them (vmap's
  carried values of batched branches and loops).
- :mod:`.static_names`: names holding the same Python value for every example
  under vmap (shape metadata, constant slices, options), constants.
- :mod:`.tapes`: lists that are tapes or stacks of generated adjoint code.
"""
