"""Canonicalizing rewrites of a parsed function, before any analysis reads it:
syntax the normalizer does not handle itself becomes syntax it does.

- assignment expressions ``(y := e)`` in positions evaluated once, in order
  (an ``if`` or ``while`` test, an assigned or returned value, call arguments)
  become a statement ``y = e`` before the statement (for a ``while`` test: before
  the loop, at the end of its body and before each ``continue``); in a later
  operand of ``and``/``or`` or a branch of a conditional expression, the
  operation becomes an ``if`` statement holding the assignment;
- ``else:`` on a ``for``/``while`` loop follows the loop, under ``if not
  flag:`` where the loop has a ``break`` (which sets the flag first);
- ``match`` statements become ``if``/``elif`` chains (literal, value, capture,
  wildcard, or-, sequence, mapping and class patterns, guards; a case whose
  or-pattern captures names is one arm per alternative).

What is not rewritten stays in the tree, marked with :data:`WHY` (the reason, a
phrase), for the normalizer's refusal to name. Nothing here raises: the source
of a function that is never transformed is parsed too.
"""

from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import gast

from .. import nodes as N

#: the attribute of a node left as it is: why it was not rewritten
WHY = "sj_unsupported_why"

_LOOPS = (gast.For, gast.While)
_SCOPES = (gast.FunctionDef, gast.Lambda, gast.ClassDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


class _Fresh:
    def __init__(self, fnode: Any) -> None:
        self.taken: Set[str] = {n.id for n in N.walk(fnode) if isinstance(n, gast.Name)}

    def __call__(self, base: str) -> str:
        i = 0
        while True:
            name = f"{base}{i or ''}"
            if name not in self.taken:
                self.taken.add(name)
                return name
            i += 1


def canonicalize(fnode: Any) -> None:
    """Rewrite ``fnode`` (a gast FunctionDef) and the functions nested in it in place."""
    if not any(
        isinstance(n, (gast.NamedExpr, gast.Match)) or (isinstance(n, _LOOPS) and n.orelse)
        for n in N.walk(fnode)
    ):
        return
    fresh = _Fresh(fnode)
    _scope(fnode, fresh)


def _scope(fnode: Any, fresh: _Fresh) -> None:
    fnode.body = _block(fnode.body, fresh)


def _block(stmts: List[Any], fresh: _Fresh) -> List[Any]:
    out: List[Any] = []
    for s in stmts:
        out.extend(_stmt(s, fresh))
    return out


def _stmt(s: Any, fresh: _Fresh) -> List[Any]:
    if isinstance(s, gast.FunctionDef):
        _scope(s, fresh)
        return [s]
    if isinstance(s, gast.Match):
        lowered = _match(s, fresh)
        if lowered is None:
            return [s]
        return _block(lowered, fresh)
    pre: List[Any] = []
    if isinstance(s, gast.While):
        tail = _hoist_while_test(s, fresh)
    else:
        _hoist_stmt(s, pre, fresh)
        tail = []
    for part in ("body", "orelse", "finalbody"):
        inner = getattr(s, part, None)
        if isinstance(inner, list):
            setattr(s, part, _block(inner, fresh))
    for h in getattr(s, "handlers", ()) or ():
        h.body = _block(h.body, fresh)
    if tail:
        s.body = _before_continues(s.body, tail) + [N.clone(t) for t in tail]
        pre = [N.clone(t) for t in tail] + pre
    if isinstance(s, _LOOPS) and s.orelse:
        return pre + _loop_else(s, fresh)
    return pre + [s]


# -- assignment expressions ----------------------------------------------------------


def _hoist_stmt(s: Any, pre: List[Any], fresh: _Fresh) -> None:
    """Hoist the walruses of the parts of ``s`` evaluated first, once."""
    seen: Set[str] = set()
    if isinstance(s, (gast.Expr, gast.Return)) and s.value is not None:
        s.value = _hoist(s.value, pre, seen, fresh)
    elif isinstance(s, gast.Assign):
        s.value = _hoist(s.value, pre, seen, fresh)
        for t in s.targets:
            _mark(t, "in an assignment target")
    elif isinstance(s, gast.AugAssign):
        _loads(s.target, seen)
        s.value = _hoist(s.value, pre, seen, fresh)
    elif isinstance(s, gast.AnnAssign) and s.value is not None:
        s.value = _hoist(s.value, pre, seen, fresh)
    elif isinstance(s, gast.If):
        s.test = _hoist(s.test, pre, seen, fresh)
    elif isinstance(s, gast.For):
        s.iter = _hoist(s.iter, pre, seen, fresh)
    elif isinstance(s, gast.Assert):
        s.test = _hoist(s.test, pre, seen, fresh)
    else:
        for field, value in gast.iter_fields(s):
            if field not in ("body", "orelse", "finalbody", "handlers"):
                _mark(value, "in this statement")


def _hoist_while_test(s: Any, fresh: _Fresh) -> List[Any]:
    """The statements computing the walruses of a ``while`` test (run before the
    loop and again before each next test), the test rewritten to read them."""
    tail: List[Any] = []
    s.test = _hoist(s.test, tail, set(), fresh)
    return tail


def _before_continues(stmts: List[Any], tail: List[Any]) -> List[Any]:
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.Continue):
            out.extend(N.clone(t) for t in tail)
        elif isinstance(s, gast.If):
            s.body = _before_continues(s.body, tail)
            s.orelse = _before_continues(s.orelse, tail)
        out.append(s)
    return out


def _loads(node: Any, seen: Set[str]) -> None:
    for n in N.walk(node):
        if isinstance(n, gast.Name):
            seen.add(n.id)


def _mark(node: Any, why: str) -> None:
    for n in N.walk(node) if isinstance(node, gast.AST) else ():
        if isinstance(n, gast.NamedExpr) and not hasattr(n, WHY):
            setattr(n, WHY, why)


def _hoist(e: Any, pre: List[Any], seen: Set[str], fresh: _Fresh) -> Any:
    """``e`` with its walruses evaluated unconditionally, in order, replaced by
    the names they bind (their assignments appended to ``pre``); ``seen``: the
    names read so far (a walrus rebinding one of them is left, marked)."""
    if isinstance(e, gast.NamedExpr):
        name = e.target.id
        read_before = name in seen  # (its own value may read it: `(n := n - 1)`)
        e.value = _hoist(e.value, pre, seen, fresh)
        if read_before:
            setattr(e, WHY, f"after `{name}` is read in the same statement")
            return e
        pre.append(N.copy_origin(N.assign(name, e.value), e))
        seen.add(name)
        return N.copy_origin(N.name(name), e)
    if isinstance(e, gast.Name):
        seen.add(e.id)
        return e
    if isinstance(e, gast.BoolOp):
        e.values[0] = _hoist(e.values[0], pre, seen, fresh)
        if any(_has_walrus(v) for v in e.values[1:]):
            return _short_circuit(e, pre, seen, fresh)
        _mark(e, "in a comprehension or a lambda")
        _loads(e, seen)
        return e
    if isinstance(e, gast.IfExp):
        e.test = _hoist(e.test, pre, seen, fresh)
        if _has_walrus(e.body) or _has_walrus(e.orelse):
            return _branches(e, pre, seen, fresh)
        _mark(e, "in a comprehension or a lambda")
        _loads(e, seen)
        return e
    if isinstance(e, gast.Compare):
        e.left = _hoist(e.left, pre, seen, fresh)
        e.comparators[0] = _hoist(e.comparators[0], pre, seen, fresh)
        for v in e.comparators[1:]:
            _mark(v, "in a chained comparison")
            _loads(v, seen)
        return e
    if isinstance(e, _COMPREHENSIONS):
        _mark(e, "in a comprehension")
        _loads(e, seen)
        return e
    if isinstance(e, gast.Lambda):
        _mark(e, "in a lambda")
        _loads(e, seen)
        return e
    for field, value in gast.iter_fields(e):
        if isinstance(value, gast.AST) and isinstance(value, gast.expr):
            setattr(e, field, _hoist(value, pre, seen, fresh))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, gast.expr):
                    value[i] = _hoist(v, pre, seen, fresh)
                elif isinstance(v, gast.keyword):
                    v.value = _hoist(v.value, pre, seen, fresh)
    return e


def _has_walrus(e: Any) -> bool:
    """Whether ``e`` holds a walrus outside comprehensions and lambdas."""
    if isinstance(e, gast.NamedExpr):
        return True
    if isinstance(e, _COMPREHENSIONS + (gast.Lambda,)):
        return False
    return any(_has_walrus(c) for c in gast.iter_child_nodes(e))


def _short_circuit(e: Any, pre: List[Any], seen: Set[str], fresh: _Fresh) -> Any:
    """``a and (y := b)`` as ``t = a`` / ``if t: y = b; t = y`` (``if not t``
    for ``or``): the later operands, and their walruses, run only when Python
    evaluates them; the value is Python's (the first falsy/truthy operand)."""
    t = fresh("and_value" if isinstance(e.op, gast.And) else "or_value")
    pre.append(N.copy_origin(N.assign(t, e.values[0]), e))
    block = pre
    for v in e.values[1:]:
        body: List[Any] = []
        body.append(N.copy_origin(N.assign(t, _hoist(v, body, seen, fresh)), v))
        test: Any = N.name(t)
        if isinstance(e.op, gast.Or):
            test = gast.UnaryOp(op=gast.Not(), operand=test)
        block.append(N.copy_origin(gast.If(test=test, body=body, orelse=[]), v))
        block = body
    return N.copy_origin(N.name(t), e)


def _branches(e: Any, pre: List[Any], seen: Set[str], fresh: _Fresh) -> Any:
    """``(y := a) if c else b`` as ``if c: y = a; t = y`` / ``else: t = b``."""
    t = fresh("if_value")
    arms = []
    for v in (e.body, e.orelse):
        arm: List[Any] = []
        arm.append(N.copy_origin(N.assign(t, _hoist(v, arm, seen, fresh)), v))
        arms.append(arm)
    pre.append(N.copy_origin(gast.If(test=e.test, body=arms[0], orelse=arms[1]), e))
    return N.copy_origin(N.name(t), e)


# -- else on loops ---------------------------------------------------------------------


def _own_breaks(stmts: List[Any]) -> bool:
    for s in stmts:
        if isinstance(s, gast.Break):
            return True
        if isinstance(s, (_LOOPS + _SCOPES)):
            continue
        for part in ("body", "orelse", "finalbody"):
            if _own_breaks(getattr(s, part, None) or []):
                return True
        for h in getattr(s, "handlers", ()) or ():
            if _own_breaks(h.body):
                return True
    return False


def _flag_breaks(stmts: List[Any], flag: str) -> List[Any]:
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.Break):
            out.append(N.copy_origin(N.assign(flag, N.const(True)), s))
        elif not isinstance(s, (_LOOPS + _SCOPES)):
            for part in ("body", "orelse", "finalbody"):
                inner = getattr(s, part, None)
                if isinstance(inner, list):
                    setattr(s, part, _flag_breaks(inner, flag))
            for h in getattr(s, "handlers", ()) or ():
                h.body = _flag_breaks(h.body, flag)
        out.append(s)
    return out


def _loop_else(s: Any, fresh: _Fresh) -> List[Any]:
    orelse, s.orelse = s.orelse, []
    if not _own_breaks(s.body):
        return [s] + orelse  # the loop always ends by its test: `else` always runs
    flag = fresh("loop_broke")
    s.body = _flag_breaks(s.body, flag)
    init = N.copy_origin(N.assign(flag, N.const(False)), s)
    test = gast.UnaryOp(op=gast.Not(), operand=N.name(flag))
    after = N.copy_origin(gast.If(test=test, body=orelse, orelse=[]), orelse[0])
    return [init, s, after]


# -- match ---------------------------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, pattern: Any, why: str) -> None:
        super().__init__(why)
        self.pattern = pattern
        self.why = why


def _match(s: Any, fresh: _Fresh) -> Optional[List[Any]]:
    """``s`` as an ``if``/``elif`` chain; None (``s`` marked) where a pattern is
    not lowered."""
    pre: List[Any] = []
    subject = _hoist(s.subject, pre, set(), fresh)
    captured = {
        n.name
        for n in N.walk(s)
        if isinstance(n, (gast.MatchAs, gast.MatchStar)) and n.name is not None
    } | {n.rest for n in N.walk(s) if isinstance(n, gast.MatchMapping) and n.rest}
    if not (isinstance(subject, gast.Name) and subject.id not in captured):
        tmp = fresh("match_subject")
        pre.append(N.copy_origin(N.assign(tmp, subject), s.subject))
        subject = N.copy_origin(N.name(tmp), s.subject)
    arms: List[Tuple[Any, List[Any]]] = []
    try:
        for case in s.cases:
            alts = [case.pattern]
            if isinstance(case.pattern, gast.MatchOr) and _captures(case.pattern):
                alts = case.pattern.patterns  # (`case [x] | (x, _):` an arm each)
            for k, alt in enumerate(alts):
                binds: List[Tuple[str, Any]] = []
                tests: List[Any] = []
                _pattern(alt, subject, tests, binds, fresh)
                if case.guard is not None:
                    tests.append(_substitute(case.guard, dict(binds)))
                body = [N.copy_origin(N.assign(n, v), alt) for n, v in binds]
                body += [N.clone(b) for b in case.body] if k else case.body
                arms.append((_conj(tests), body or [gast.Pass()]))
    except _Refused as r:
        setattr(s, WHY, f"with {r.why}")
        s.sj_refused_at = r.pattern  # (the location of the refusal)
        return None
    chain: List[Any] = []
    for test, body in reversed(arms):
        if test is None:  # irrefutable: what follows is unreachable
            chain = body
        else:
            chain = [N.copy_origin(gast.If(test=test, body=body, orelse=chain), body[0])]
    return pre + chain


def _captures(p: Any) -> bool:
    return any(
        (isinstance(n, (gast.MatchAs, gast.MatchStar)) and n.name is not None)
        or (isinstance(n, gast.MatchMapping) and n.rest is not None)
        for n in N.walk(p)
    )


def _conj(tests: List[Any]) -> Any:
    if not tests:
        return None
    if len(tests) == 1:
        return tests[0]
    return gast.BoolOp(op=gast.And(), values=tests)


def _substitute(e: Any, binds: dict) -> Any:
    """A copy of ``e`` with the names in ``binds`` read replaced by their values."""

    class Sub(gast.NodeTransformer):
        def visit_Name(self, n: Any) -> Any:
            if isinstance(n.ctx, gast.Load) and n.id in binds:
                return N.clone(binds[n.id])
            return n

    return Sub().visit(N.clone(e))


#: the builtin classes whose one positional sub-pattern matches the subject itself
_SELF_MATCHING = frozenset(
    "bool bytearray bytes dict float frozenset int list set str tuple".split()
)


def _self(p: Any) -> bool:
    return isinstance(p.cls, gast.Name) and p.cls.id in _SELF_MATCHING


def _isinstance(subject: Any, types: Any) -> Any:
    return N.call(N.name("isinstance"), [N.clone(subject), types])


def _pattern(
    p: Any, subj: Any, tests: List[Any], binds: List[Tuple[str, Any]], fresh: _Fresh
) -> None:
    """Append to ``tests`` what ``p`` checks of ``subj`` and to ``binds`` the
    names it captures (``subj`` an expression without effects)."""
    if isinstance(p, gast.MatchValue):
        op = gast.Eq()
        tests.append(gast.Compare(left=N.clone(subj), ops=[op], comparators=[p.value]))
    elif isinstance(p, gast.MatchSingleton):
        tests.append(
            gast.Compare(left=N.clone(subj), ops=[gast.Is()], comparators=[N.const(p.value)])
        )
    elif isinstance(p, gast.MatchAs):
        if p.pattern is not None:
            _pattern(p.pattern, subj, tests, binds, fresh)
        if p.name is not None:
            binds.append((p.name, subj))
    elif isinstance(p, gast.MatchOr):
        alts = []
        for alt in p.patterns:
            t: List[Any] = []
            b: List[Tuple[str, Any]] = []
            _pattern(alt, subj, t, b, fresh)
            if b:
                raise _Refused(p, "an or-pattern (`|`) capturing names inside another pattern")
            if not t:
                return  # an alternative always matches
            alts.append(_conj(t))
        tests.append(gast.BoolOp(op=gast.Or(), values=alts))
    elif isinstance(p, gast.MatchSequence):
        stars = [i for i, q in enumerate(p.patterns) if isinstance(q, gast.MatchStar)]
        seq = gast.Tuple(elts=[N.name("list"), N.name("tuple")], ctx=gast.Load())
        tests.append(_isinstance(subj, seq))
        length = N.call(N.name("len"), [N.clone(subj)])
        n = len(p.patterns) - len(stars)
        tests.append(
            gast.Compare(
                left=length, ops=[gast.GtE() if stars else gast.Eq()], comparators=[N.const(n)]
            )
        )
        star = stars[0] if stars else len(p.patterns)
        for i, q in enumerate(p.patterns):
            if i < star:
                idx: Any = N.const(i)
            elif i == star:
                if q.name is not None:
                    stop = N.const(None) if i == len(p.patterns) - 1 else N.const(i - n)
                    sl = gast.Slice(lower=N.const(i), upper=stop, step=None)
                    part = gast.Subscript(value=N.clone(subj), slice=sl, ctx=gast.Load())
                    binds.append((q.name, N.call(N.name("list"), [part])))
                continue
            else:
                idx = N.const(i - len(p.patterns))
            item = gast.Subscript(value=N.clone(subj), slice=idx, ctx=gast.Load())
            _pattern(q, item, tests, binds, fresh)
    elif isinstance(p, gast.MatchMapping):
        tests.append(_isinstance(subj, N.name("dict")))
        for k, q in zip(p.keys, p.patterns):
            tests.append(
                gast.Compare(left=N.clone(k), ops=[gast.In()], comparators=[N.clone(subj)])
            )
            item = gast.Subscript(value=N.clone(subj), slice=N.clone(k), ctx=gast.Load())
            _pattern(q, item, tests, binds, fresh)
        if p.rest is not None:  # {k: subj[k] for k in subj.keys() if k not in (keys)}
            key = fresh("key")
            rest = N.parse_expr(f"{{{key}: S[{key}] for {key} in S.keys() if {key} not in ()}}")
            rest.generators[0].ifs[0].comparators[0].elts = [N.clone(k) for k in p.keys]
            binds.append((p.rest, N.copy_origin(_substitute(rest, {"S": subj}), p)))
    elif isinstance(p, gast.MatchClass):
        tests.append(_isinstance(subj, N.clone(p.cls)))
        if _self(p) and p.patterns:
            if len(p.patterns) > 1:
                raise _Refused(p, f"`{p.cls.id}(...)` with more than one sub-pattern")
            # (`case float(v)`: v is the subject itself)
            _pattern(p.patterns[0], subj, tests, binds, fresh)
        for i, q in enumerate(() if _self(p) else p.patterns):
            # the class's `__match_args__` names the attribute (read while transforming)
            # (a class without it: "cannot resolve `C.__match_args__`" at the pattern)
            names = gast.Attribute(value=N.clone(p.cls), attr="__match_args__", ctx=gast.Load())
            key = gast.Subscript(value=N.copy_origin(names, p), slice=N.const(i), ctx=gast.Load())
            item = N.call(N.name("getattr"), [N.clone(subj), N.copy_origin(key, p)])
            _pattern(q, N.copy_origin(item, p), tests, binds, fresh)
        for a, q in zip(p.kwd_attrs, p.kwd_patterns):
            _pattern(q, N.attr(N.clone(subj), a), tests, binds, fresh)
    else:
        raise _Refused(p, f"a `{type(p).__name__}` pattern")
