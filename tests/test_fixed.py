from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from rankaug import RandomAugmentWrapper
from rankaug._fixed import Changes, FixedSettings
from tests.forked import in_a_forked_child


class Made(FixedSettings):
    fixed_settings: ClassVar[frozenset[str]] = frozenset({"size"})
    arguments_only: ClassVar[frozenset[str]] = frozenset({"p"})

    def __init__(self, size: int) -> None:
        self.size = size
        self.count = 0


class Squared(Made):
    fixed_settings: ClassVar[frozenset[str]] = Made.fixed_settings | {"area"}

    def __init__(self, side: int) -> None:
        super().__init__(side)
        self.area = side * side


class Making(Made):
    made_with = "count"


class Rooted(FixedSettings):
    """A folder's reader: its root kept resolved, its kinds as a sorted tuple."""

    fixed_settings: ClassVar[frozenset[str]] = frozenset({"root", "kinds", "name"})
    made_with = "_done"

    def __init__(self, root: str | Path, kinds: Any, name: str = "a") -> None:
        self.root = Path(root).resolve()
        self.kinds = tuple(sorted(kinds))
        self.name = name
        self._done = True


@dataclass(frozen=True)
class Shape:
    size: int = 1
    side: int = 1


class Flat(Made):
    """``Flat(3, side=2)``: a deprecated flat keyword of ``Shape``; ``size`` is its own."""

    parameter_objects: ClassVar[dict[str, type]] = {"shape": Shape}


class TestFixedSettings:
    def test_a_fixed_setting_is_set_once_and_then_refused(self) -> None:
        made = Made(3)
        with pytest.raises(
            AttributeError,
            match=r"^Made\.size cannot be assigned: it is fixed "
            r"when the Made is made.*make a new Made with the size you want$",
        ):
            made.size = 4
        with pytest.raises(AttributeError, match=r"^Made\.size cannot be deleted: it is fixed"):
            del made.size
        assert made.size == 3

    def test_the_setting_held_may_be_set_again_until_made(self) -> None:
        # a subclass that sets it before calling the constructor, which sets it again
        making = Making.__new__(Making)
        making.size = np.int64(3)  # type: ignore[assignment]
        Making.__init__(making, 3)
        assert (making.size, type(making.size)) == (3, int)  # the constructor's
        with pytest.raises(AttributeError, match=r"^Making\.size cannot be assigned"):
            making.size = 3  # made: refused, as any assignment

    def test_another_value_is_refused_while_made(self) -> None:
        making = Making.__new__(Making)
        making.size = 4
        with pytest.raises(AttributeError, match=r"^Making\.size cannot be assigned"):
            Making.__init__(making, 3)

    def test_another_value_set_before_the_constructor_is_named_with_the_constructors(
        self,
    ) -> None:
        # the error named neither value: which one was set, and what the constructor set
        making = Making.__new__(Making)
        making.size = 4
        with pytest.raises(
            AttributeError,
            match=r"^Making\.size cannot be assigned: it was set before the constructor, "
            r"which sets size itself, to another value \(set: 4; the constructor's: 3\)",
        ):
            Making.__init__(making, 3)

    def test_a_setting_set_before_the_constructor_to_its_argument_is_taken(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # before: refused, the constructor's value being made of the argument (a path
        # resolved, a list kept as a sorted tuple), not the argument itself
        monkeypatch.chdir(tmp_path)
        spellings: list[tuple[Any, Any]] = [("data", [".b", ".a"]), (Path("data"), (".a", ".b")),
                                            (tmp_path / "data", {".a", ".b"})]  # fmt: skip
        for root, kinds in spellings:
            rooted = Rooted.__new__(Rooted)
            rooted.root, rooted.kinds = root, kinds
            Rooted.__init__(rooted, "data", kinds)  # the path however spelled, the kinds given
            assert (rooted.root, rooted.kinds) == (tmp_path / "data", (".a", ".b"))
        for name, value in [("root", "other"), ("kinds", [".c"]), ("name", "./a")]:
            rooted = Rooted.__new__(Rooted)
            setattr(rooted, name, value)
            with pytest.raises(
                AttributeError, match=rf"^Rooted\.{name} cannot be assigned: it was set before"
            ):
                Rooted.__init__(rooted, "data", [".a", ".b"])  # a name is no path: "./a" is not "a"

    def test_a_list_is_the_setting_given_as_an_equal_list_or_tuple(self) -> None:
        # before: refused unless the very list given (self.kinds = [".b", ".a"], then
        # Rooted.__init__(..., [".b", ".a"]): two lists), or a list set and a tuple given
        for given in ([".b", ".a"], (".b", ".a")):
            rooted = Rooted.__new__(Rooted)
            rooted.kinds = [".b", ".a"]  # type: ignore[assignment]
            Rooted.__init__(rooted, ".", given)
            assert rooted.kinds == (".a", ".b")
        rooted = Rooted.__new__(Rooted)
        rooted.kinds = [".b"]  # type: ignore[assignment]
        with pytest.raises(AttributeError, match=r"^Rooted\.kinds cannot be assigned: it was set"):
            Rooted.__init__(rooted, ".", [".b", ".a"])

    def test_the_argument_is_read_above_a_setattr_that_goes_on_to_this_one(self) -> None:
        # before: the frame read was the __setattr__ of the class (RandomAugmentWrapper's,
        # yours), whose locals are name and value: a setting set before the constructor to
        # its argument, which the constructor keeps in another form, was refused
        class Watched(Rooted):
            def __setattr__(self, name: str, value: Any) -> None:
                super().__setattr__(name, value)

        kinds: Any = [".b", ".a"]
        watched = Watched.__new__(Watched)
        watched.kinds = kinds
        Watched.__init__(watched, ".", kinds)
        assert watched.kinds == (".a", ".b")

        class Aug(RandomAugmentWrapper[Any]):
            def __init__(self, dataset: Any) -> None:
                self.stream = "aug"  # type: ignore[assignment]  # kept as its word
                super().__init__(dataset, _keep, seed=0, stream="aug")

        made = RandomAugmentWrapper([1, 2], _keep, seed=0, stream="aug")
        assert Aug([1, 2]).stream == made.stream

    def test_a_setting_made_from_the_arguments_names_them(self) -> None:
        # before: "make a new Squared with the area you want", an argument it has not
        squared = Squared(3)
        with pytest.raises(
            AttributeError,
            match=r"^Squared\.area cannot be assigned: .*make a new Squared with the "
            r"arguments that give the area you want$",
        ):
            squared.area = 16
        with pytest.raises(AttributeError, match=r"make a new Squared with the size you want$"):
            squared.size = 4  # an argument of a base's constructor

    def test_an_argument_only_is_never_an_attribute(self) -> None:
        made = Made(3)
        with pytest.raises(
            AttributeError,
            match=r"^Made\.p cannot be assigned: p is an argument "
            r"of Made.*with the p you want \(p= also takes a function",
        ):
            made.p = 0.5  # type: ignore[attr-defined]
        assert not hasattr(made, "p")

    def test_a_deprecated_flat_keyword_is_refused_naming_the_new_spelling(self) -> None:
        # before: flat.side = 2 made an attribute nothing read
        flat = Flat(3)
        with pytest.raises(
            AttributeError,
            match=r"^Flat\.side cannot be assigned: side= is a deprecated spelling of "
            r"shape=rankaug\.Shape\(side=\.\.\.\).*make a new Flat with "
            r"shape=rankaug\.Shape\(side=\.\.\.\)$",
        ):
            flat.side = 2  # type: ignore[attr-defined]
        assert not hasattr(flat, "side")

    def test_a_subclass_of_yours_owns_its_attribute_of_that_name(self) -> None:
        # before: a subclass keeping self.side (its own) could not be made
        class Mine(Flat):
            def __init__(self, count: int) -> None:
                super().__init__(count)
                self.side = count * 2

            def widen(self) -> None:
                self.side += 1

        mine = Mine(3)
        mine.widen()
        assert mine.side == 7
        with pytest.raises(AttributeError, match=r"^Mine\.side cannot be assigned: side= is a "):
            mine.side = 1  # from outside its methods: the deprecated keyword assigned

    def test_a_setattr_of_yours_does_not_make_every_assignment_your_own(self) -> None:
        # before: the frame read was your __setattr__, a method of the subclass: the
        # deprecated keyword assigned from outside was taken as the subclass's own
        class Watched(Flat):
            def __setattr__(self, name: str, value: Any) -> None:
                super().__setattr__(name, value)

        watched = Watched(3)
        with pytest.raises(AttributeError, match=r"^Watched\.side cannot be assigned: side= is a "):
            watched.side = 1  # type: ignore[attr-defined]
        assert not hasattr(watched, "side")

    def test_a_field_the_constructor_takes_itself_is_no_flat_keyword(self) -> None:
        flat = Flat(3)  # size: Shape's field, and Made's own argument (fixed)
        with pytest.raises(AttributeError, match=r"^Flat\.size cannot be assigned: it is fixed"):
            flat.size = 4
        assert flat.size == 3

    def test_other_attributes_stay_free(self) -> None:
        made = Made(3)
        made.count = 5
        made.other = 1  # type: ignore[attr-defined]
        del made.other  # type: ignore[attr-defined]
        assert (made.count, hasattr(made, "other")) == (5, False)

    def test_copies_keep_the_setting_and_refuse_it_too(self) -> None:
        for copied in (copy.deepcopy(Made(3)), pickle.loads(pickle.dumps(Made(3)))):
            assert copied.size == 3
            with pytest.raises(AttributeError, match="cannot be assigned"):
                copied.size = 4


def _keep(sample: Any, rng: Any) -> Any:
    return sample


def _change_in_a_rank(changes: Changes, queue: Any) -> None:
    changes.changed()
    queue.put((changes.read(), changes.seen))


class TestChanges:
    def test_a_copy_made_before_a_change_sees_it(self) -> None:
        changes = Changes()
        changes.changed()
        before = copy.copy(changes)  # shares the count, as a DataLoader worker's copy does
        assert before.read() == before.seen == 1
        changes.changed()
        assert (changes.read(), changes.seen, before.read(), before.seen) == (2, 2, 2, 1)
        assert "persistent workers" in str(changes.stale(Made(1)))

    def test_a_pickled_copy_counts_on_its_own(self) -> None:
        changes = Changes()
        alone = pickle.loads(pickle.dumps(changes))  # not shared: a plain pickle copies
        changes.changed()
        assert alone.read() == alone.seen == 0

    def test_a_rank_forked_after_it_was_made_counts_in_its_own_slot(self) -> None:
        # before: the rank counted in a slot of its own but read the parent's, so every
        # sample after an assignment there was refused as a stale worker's
        changes = Changes()
        assert in_a_forked_child(_change_in_a_rank, changes) == (1, 1)
        assert (changes.read(), changes.seen) == (0, 0)  # the parent's count: its own
