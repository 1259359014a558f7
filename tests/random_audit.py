"""The audit for global random state: the calls of a source file that draw from it or set it.

``tests/test_quality.py`` runs it on every module of the package. A call's name is read
through the imports in scope where it is made, as Python binds names: an import (at the
top, or in the function) binds the name for its scope and the functions inside it; a
parameter, assignment, loop or ``with`` target, handler, comprehension variable or
nested definition of that name binds it to something else in its own scope
(``def f(random): random.random()`` draws from the ``random`` given), and a class
body's names are not seen by its methods. What counts:

* the functions of ``random`` and ``np.random`` but those that make or read a state of
  their own (:data:`OWN_STATE`), and torch's listed in :data:`GLOBAL_RANDOM` (dropout
  and other layers that draw while training among them) unless given ``generator=``;
* a tensor's draws, in place (:data:`TENSOR_DRAWS`, ``x.uniform_()``, nn.init's
  initialisers) or not (``x.bernoulli()``), unless given ``generator=``;
* ``sample()`` and ``rsample()`` of a ``torch.distributions`` object (which takes no
  generator: it draws from the global one), where the audit can tell it is one: built
  in the call's own expression, bound to a name (or an attribute, ``self.d``) from its
  class, or a name annotated with one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["GLOBAL_RANDOM", "OWN_STATE", "TENSOR_DRAWS", "dotted", "global_random_calls"]

# Every function of ``random`` and ``np.random`` but those that make or read a state of
# their own (OWN_STATE) draws from or sets the global one; torch's are listed.
OWN_STATE = {
    "random": {"Random", "SystemRandom", "getstate"},
    "np.random": {"default_rng", "Generator", "RandomState", "SeedSequence", "BitGenerator",
                  "PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937", "get_state"},
}  # fmt: skip
_DROPOUTS = {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
             "FeatureAlphaDropout", "RReLU"}  # fmt: skip
GLOBAL_RANDOM = {
    "torch": {"manual_seed", "seed", "rand", "randn", "randint", "randperm", "rand_like",
              "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
              "poisson", "set_rng_state", "dropout", "alpha_dropout", "feature_dropout",
              "feature_alpha_dropout", "rrelu"},
    "torch.random": {"manual_seed", "seed", "set_rng_state"},
    "torch.cuda": {"manual_seed", "manual_seed_all", "seed", "seed_all", "set_rng_state",
                   "set_rng_state_all"},
    "torch.mps": {"manual_seed", "seed", "set_rng_state"},
    "torch.nn.functional": {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                            "feature_alpha_dropout", "rrelu", "gumbel_softmax"},
    # layers whose forward draws while training: a module of the package never trains
    "torch.nn": _DROPOUTS,
    "torch.nn.modules.dropout": _DROPOUTS,
}  # fmt: skip
# Those that draw only while training, by their flag: (position, keyword, default). A
# call whose flag is the constant False (given, or by default) draws nothing.
_TRAINING = {
    **{f"torch.nn.functional.{name}": (2, "training", True)
       for name in ("dropout", "dropout1d", "dropout2d", "dropout3d")},
    **{f"torch.nn.functional.{name}": (2, "training", False)
       for name in ("alpha_dropout", "feature_alpha_dropout", "rrelu")},
    **{f"torch.{name}": (2, "train", True)
       for name in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout")},
    "torch.rrelu": (3, "training", False),
}  # fmt: skip
# A tensor's in-place draws (``x.uniform_()``, ``torch.nn.init.normal_(w)``, its other
# initialisers): from the global generator unless given ``generator=``, whatever the
# object they are called on.
TENSOR_DRAWS = {"uniform_", "normal_", "random_", "bernoulli_", "exponential_",
                "geometric_", "cauchy_", "log_normal_", "trunc_normal_", "xavier_uniform_",
                "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
                "sparse_"}  # fmt: skip
# A tensor's draws that are not in place, on anything but a module (``x.bernoulli()``;
# ``torch.bernoulli`` is GLOBAL_RANDOM's). Not ``multinomial``: numpy's Generator has one.
_TENSOR_METHOD_DRAWS = {"bernoulli"}
_DISTRIBUTION_DRAWS = {"sample", "rsample", "sample_n"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` of a name or an attribute of one (``None``: another expression)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _numpy(full: str) -> str:
    """``full`` with ``numpy`` written ``np``."""
    return "np" + full[len("numpy") :] if full.partition(".")[0] == "numpy" else full


class _Scope:
    """The names one scope binds: by import (to what, dotted in full), or otherwise."""

    def __init__(self, node: ast.AST, parent: _Scope | None) -> None:
        self.node, self.parent = node, parent
        self.imports: dict[str, str] = {}
        self.others: set[str] = set()
        self.declared: set[str] = set()  # global or nonlocal: bound elsewhere
        self.distributions: set[str] = set()  # names bound to a torch.distributions object
        for child in _own_nodes(node):
            self._bind(child)
        self.others -= self.declared

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is None:
                    head = alias.name.partition(".")[0]
                    self.imports[head] = head
                else:
                    self.imports[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            self.others.add(node.id)
        elif isinstance(node, ast.arg):
            self.others.add(node.arg)
        elif isinstance(node, (ast.ExceptHandler, *_DEFINITIONS)) and node.name:
            if node is not self.node:  # a definition binds its name outside itself
                self.others.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            self.declared.update(node.names)


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` that are its own: not inside a scope within it (its
    definition, the node itself, is; a function's parameters are)."""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        yield from ast.walk(scope.args)
        todo: list[ast.AST] = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    elif isinstance(scope, ast.ClassDef):
        todo = list(scope.body)
    else:
        todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


class _Audit:
    """Walks a module, scope by scope, collecting the global draws (see the module)."""

    def __init__(self) -> None:
        self.calls: set[str] = set()
        self.attributes: set[str] = set()  # dotted attributes bound to a distribution

    def visit(self, node: ast.AST, scope: _Scope | None) -> None:
        if isinstance(node, (ast.Module, *_SCOPES)):
            scope = _Scope(node, scope)
            for name in _annotated_distributions(node, self, scope):
                scope.distributions.add(name)
        assert scope is not None
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and node.value is not None
            and self._builds_distribution(node.value, scope)
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                self._bind_distribution(target, scope)
        if isinstance(node, ast.Call):
            self._check(node, scope)
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def _bind_distribution(self, target: ast.AST, scope: _Scope) -> None:
        if isinstance(target, ast.Name):
            scope.distributions.add(target.id)
        elif (spelled := dotted(target)) is not None:
            self.attributes.add(spelled)

    def resolve(self, name: str, scope: _Scope) -> str | None:
        """The dotted name ``name`` calls, read through the imports in scope; ``None``:
        its first part is bound otherwise (a parameter, a variable)."""
        head, dot, rest = name.partition(".")
        found = _binding(head, scope)
        if found is None:  # unbound: taken as spelled
            return _numpy(name)
        if head not in found.imports:
            return None
        return _numpy(found.imports[head] + dot + rest)

    def _builds_distribution(self, value: ast.AST, scope: _Scope) -> bool:
        if not isinstance(value, ast.Call):
            return False
        name = dotted(value.func)
        full = None if name is None else self.resolve(name, scope)
        return _is_distribution_class(full)

    def _is_distribution(self, value: ast.AST, scope: _Scope) -> bool:
        if self._builds_distribution(value, scope):
            return True
        if isinstance(value, ast.Name):
            found = _binding(value.id, scope)
            return found is not None and value.id in found.distributions
        return dotted(value) in self.attributes

    def _check(self, node: ast.Call, scope: _Scope) -> None:
        # torch.rand(..., generator=g), x.uniform_(generator=g): drawn from g (None: the
        # global generator)
        own = any(
            keyword.arg == "generator"
            and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is None)
            for keyword in node.keywords
        )
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _DISTRIBUTION_DRAWS
            and self._is_distribution(func.value, scope)
        ):
            if not own:
                self.calls.add(f"torch.distributions.{func.attr}")
            return
        if isinstance(func, ast.Attribute) and func.attr in TENSOR_DRAWS:
            if not own:
                self.calls.add(f"tensor.{func.attr}")
            return
        name = dotted(func)
        full = None if name is None else self.resolve(name, scope)
        module, _, function = (full or "").rpartition(".")
        if own and (full is None or module.startswith("torch")):
            return
        if full is not None and module.startswith("torch") and function in TENSOR_DRAWS:
            self.calls.add(f"tensor.{function}")  # from torch.nn.init import normal_
        elif full is not None and module in OWN_STATE:
            if function not in OWN_STATE[module]:
                self.calls.add(full)
        elif full is not None and function in GLOBAL_RANDOM.get(module, set()):
            if _draws(node, full):  # a dropout's only while training
                self.calls.add(full)
        elif isinstance(func, ast.Attribute) and func.attr in _TENSOR_METHOD_DRAWS:
            self.calls.add(f"tensor.{func.attr}")


def _binding(name: str, scope: _Scope | None) -> _Scope | None:
    """The scope whose binding of ``name`` a use in ``scope`` reads (``None``: none).

    A class body's names are seen in it, not in the functions inside it.
    """
    here = scope
    while here is not None:
        seen = here is scope or not isinstance(here.node, ast.ClassDef)
        if seen and name not in here.declared and (name in here.imports or name in here.others):
            return here
        here = here.parent
    return None


def _is_distribution_class(full: str | None) -> bool:
    """Whether ``full`` names a class of ``torch.distributions`` (``Normal``: capitalised)."""
    if full is None or not full.startswith("torch.distributions."):
        return False
    return full.rpartition(".")[2][:1].isupper()


def _annotated_distributions(node: ast.AST, audit: _Audit, scope: _Scope) -> Iterator[str]:
    """The parameters and variables of scope ``node`` annotated with a distribution class."""
    for child in _own_nodes(node):
        if isinstance(child, ast.arg) and child.annotation is not None:
            name, annotation = child.arg, child.annotation
        elif isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
            name, annotation = child.target.id, child.annotation
        else:
            continue
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            annotation = ast.parse(annotation.value, mode="eval").body  # a string annotation
        for part in ast.walk(annotation):  # Normal | None, Optional[Normal]
            spelled = dotted(part)
            if spelled is not None and _is_distribution_class(audit.resolve(spelled, scope)):
                yield name
                break


def _draws(node: ast.Call, full: str) -> bool:
    """Whether a call of ``full`` draws: a dropout's only while training (``_TRAINING``)."""
    flag = _TRAINING.get(full)
    if flag is None:
        return True
    position, keyword, default = flag
    given = [k.value for k in node.keywords if k.arg == keyword]
    if len(node.args) > position:
        given.append(node.args[position])
    if not given:
        return default
    return not (isinstance(given[0], ast.Constant) and given[0].value is False)


def global_random_calls(path: Path) -> set[str]:
    """The calls of ``path`` that draw from (or set) global random state, by full name.

    ``tensor.NAME`` for a tensor's draw, ``torch.distributions.sample`` for a
    distribution's.
    """
    audit = _Audit()
    audit.visit(ast.parse(path.read_text(), filename=str(path)), None)
    return audit.calls
