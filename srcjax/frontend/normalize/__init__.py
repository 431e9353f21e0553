"""Normalization: user function -> structured A-normal form with resolved calls.

The output is a gast ``FunctionDef`` in a small language every transform reads:

- ``x = <op>`` where ``<op>`` is one primitive applied to atoms (names and
  constants; index expressions and static keyword values may be small trees), a
  copy of an atom, or a container display of atoms. Each such statement
  carries ``stmt.sj_op`` (an :class:`Op`) and ``stmt.sj_origin`` (user line).
- ``lst.append(x)`` and other expression statements (``print``), also with
  ``sj_op``.
- ``if cond:`` on a name, ``while <test>:`` and ``for i in range(...)``, with no
  ``break``/``continue`` (lowered to flags) and one ``return`` at the end.

Calls to user functions are inlined (their locals renamed), so the transforms
see one flat body. Every call is resolved statically: to a primitive of the
registry, a user function, a Python builtin that runs as-is, or "unknown"
(allowed only off the differentiated path).

The package's modules, one job each (see docs/ARCHITECTURE.md, "Frontend"):
:mod:`.anf` the output language (Op, Normalized, Namer); :mod:`.normalizer`
the driver class and :func:`normalize`; :mod:`.lower` break/continue/return to
flags; :mod:`.resolve` the callee kind -> handler table of calls; the
converters :mod:`.statements`, :mod:`.expressions`, :mod:`.containers`,
:mod:`.comprehensions`, :mod:`.loops`; the call handlers :mod:`.calls`,
:mod:`.inline`, :mod:`.functions`, :mod:`.nested`, :mod:`.lax_calls`,
:mod:`.trees`, :mod:`.typed`; name resolution :mod:`.scope`; the analyses
:mod:`.analyses` and the value types :mod:`.typetree`.
"""

from .anf import Namer, Normalized, Op
from .common import plain_object
from .normalizer import Normalizer, dependencies_valid, normalize, param_names
from .typetree import ClassKind, _static_callable, type_tree

__all__ = ["Op", "Normalized", "normalize", "Namer"]
# (also imported from here by the rest of srcjax: Normalizer, ClassKind, type_tree,
# plain_object, dependencies_valid, param_names, _static_callable)
_ = (Normalizer, ClassKind, type_tree, plain_object, dependencies_valid, param_names)
_ = _static_callable
