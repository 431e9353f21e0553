"""Module-level Python scalars read by a helper that another module's jitted
function inlines (fresh-user round 6, item 15)."""

SCALE = 2.0
FLAG = True
SHAPE = (2,)


def helper(x):
    if FLAG:
        return x * SCALE
    return -x


def padded(x):
    return x + len(SHAPE) * SCALE
