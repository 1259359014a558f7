"""``KeyMap``: dict samples whose targets sit under other keys, nested or not."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, ClassVar

from rankaug import checks
from rankaug._fixed import FixedSettings
from rankaug.adapters.handed import Handed, refuse_stale, restored_values
from rankaug.adapters.paths import beside, describe_keys, is_object_list, put
from rankaug.boxes import BoxFormat, check_box_format
from rankaug.samples.hf_arrays import NONE_DECLARED, Declared, in_declared_dtypes
from rankaug.samples.hf_rows import bound_to, typed
from rankaug.samples.images import image_hw, image_to_numpy, value_to_numpy
from rankaug.samples.pair_mask import channels_last, height_width, reads_first
from rankaug.samples.restore import check_tv_boxes, holds_wrapped, is_wrapped, rewrap_values
from rankaug.samples.sizes import SIZE_KEYS, resized_sizes
from rankaug.samples.suggest import role_of
from rankaug.samples.unread import known, refuse_unread, unread_fields

__all__ = ["KeyMap"]

#: rankaug's names that are not per-box label fields.
_NOT_LABELS = frozenset({"image", "bboxes", "mask", "keypoints"})
_NOTHING: Mapping[str, Any] = {}


class KeyMap(FixedSettings):
    """A :class:`rankaug.types.SampleAdapter` for dict samples whose targets have other keys.

    Each argument names where rankaug's target is in the sample: a key (``"img"``) or a
    dotted path into nested dicts (``"objects.bbox"``; a key that itself contains dots is
    found too). The output has the sample's own structure: every value is written back
    where it was read, in its own container type (lists stay lists, tensors tensors, a
    PIL image a PIL image), nested dicts are copied rather than changed, and every other
    key is kept as it is. A path that matches nothing in a sample is an error. Additional
    images and masks of an albumentations pipeline are read as ``DefaultAdapter`` reads
    them: where the map names them (``image2="pair.right"``), else under their own key.

    Per-box fields stay aligned with the boxes: ``labels`` and every extra name given
    are per-box label fields (give them to the wrapper's ``label_fields``), and when the
    boxes sit in a dict of per-object lists (Hugging Face's ``objects``), every other
    list there is one too, under its dotted path (``"objects.id"``: add it to
    ``label_fields`` to carry it). A per-box value the transform does not carry is
    refused when the boxes are dropped or added (and by the multi-sample wrappers
    before they start), never left stale.

    Args:
        image: The image's key or path.
        bboxes: The boxes' key or path, or ``None`` (none).
        labels: The boxes' labels.
        mask: A semantic mask (``HxW[xC]``; beside a tensor image, a 3-D tensor is
            ``CxHxW`` like it).
        masks: Instance masks ``(N, H, W)``.
        keypoints: Keypoints ``(K, 2+)``.
        segments: Instance polygons (:mod:`rankaug.polygons`).
        box_format: The samples' box format, when the layout fixes it (``"coco"`` for
            Hugging Face): the wrappers refuse another; ``None`` says nothing.
        **other_label_fields: More per-box fields, ``name=path``.

    Raises:
        TypeError: If a path (``image`` included: it cannot be ``None``) is not a string.
        ValueError: If a path or one of its dotted parts is empty, two names share a
            path, or ``box_format`` is unknown.

    >>> import numpy as np
    >>> adapter = KeyMap(bboxes="objects.bbox", labels="objects.category")
    >>> sample = {"image": np.zeros((4, 6, 3), np.uint8), "image_id": 9,
    ...           "objects": {"bbox": [[0, 0, 2, 2]], "category": [3], "id": [17]}}
    >>> data, state = adapter.unpack(sample, {"image", "bboxes", "labels", "objects.id"})
    >>> sorted(data), data["labels"]
    (['bboxes', 'image', 'labels', 'objects.id'], [3])
    >>> data.update(bboxes=np.zeros((0, 4)), labels=np.zeros(0), **{"objects.id": np.zeros(0)})
    >>> adapter.repack(data, state)["objects"]
    {'bbox': [], 'category': [], 'id': []}
    """

    #: Read once, into the paths every sample is unpacked by: assigning them is refused.
    fixed_settings: ClassVar[frozenset[str]] = frozenset({"keys", "box_format"})
    made_with = "_others"  # set after them: a subclass may have set them before
    arguments_only = _NOT_LABELS | {"labels", "masks", "segments"}  # kept in keys: never read
    arguments_kept_in = "keys"
    reads_box_format: str | None = None  # the wrapper's (set by check_adapter)
    box_format_given_as: str = "box_format"  # where the wrapper's was given (likewise)
    #: A Hugging Face dataset's typed empty values by path, array columns' dtypes (for_dataset's).
    typed_empty: Mapping[str, Any] = _NOTHING
    declared_dtypes: Mapping[tuple[str, ...], Declared] = NONE_DECLARED
    #: The transform's additional targets, ``{name: "image" or "mask"}`` (check_adapter's).
    additional_targets: Mapping[str, str] = _NOTHING

    #: Top-level keys that hold no per-box value, or that a preset rebuilds itself.
    _not_per_box: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self,
        image: str = "image",
        *,
        bboxes: str | None = None,
        labels: str | None = None,
        mask: str | None = None,
        masks: str | None = None,
        keypoints: str | None = None,
        segments: str | None = None,
        box_format: BoxFormat | None = None,
        **other_label_fields: str,
    ) -> None:
        checks.key_path(image, "image")  # None too: every sample has an image
        given = {"image": image, "bboxes": bboxes, "labels": labels, "mask": mask,
                 "masks": masks, "keypoints": keypoints, "segments": segments,
                 **other_label_fields}  # fmt: skip
        #: ``{rankaug's name: the sample's key or dotted path}``.
        self.keys: dict[str, str] = {k: v for k, v in given.items() if v is not None}
        self._parts = {
            name: tuple(checks.key_path(path, name).split(".")) for name, path in self.keys.items()
        }
        by_path: dict[str, str] = {}
        for name, path in self.keys.items():
            if path in by_path:
                raise ValueError(f"KeyMap gives {path!r} to both {by_path[path]}= and {name}=")
            by_path[path] = name
        self.box_format: BoxFormat | None = (
            None if box_format is None else check_box_format(box_format)
        )
        self._others = tuple((n, p) for n, p in self._parts.items() if n != "image")
        self._kept = {n: p for n, p in self.keys.items() if n != "image"}  # (for messages)
        self._per_box = frozenset(n for n in self.keys if n not in _NOT_LABELS)
        box_parts = self._parts.get("bboxes", ())
        # a dict of per-object lists around the boxes: its other lists are per-box too
        self._container = box_parts[:-1] if len(box_parts) > 1 else None
        container = self._container
        self._in_container = frozenset(
            p[-1] for p in self._parts.values() if container is not None and p[:-1] == container
        )
        self._prefix = "" if container is None else ".".join(container) + "."
        self._tops = frozenset(p[0] for p in self._parts.values())
        # the sample keys the map reads: the tops of its paths, and keys with dots in them
        self._read = self._tops | frozenset(self.keys.values())

    def for_dataset(self, dataset: object) -> KeyMap:
        """This map, or a copy that reads a Hugging Face dataset's rows in their types.

        A row without objects's untyped empty lists are read as the other rows' values
        (:mod:`~rankaug.samples.hf_rows`), array columns in their declared dtypes (an
        ``Array3D`` ``uint8`` image, given ``int64``: :mod:`~rankaug.samples.hf_arrays`).
        """
        return bound_to(self, dataset)

    # reading

    def _get(self, sample: Mapping[str, Any], name: str, parts: tuple[str, ...]) -> Any:
        if len(parts) == 1:
            if parts[0] in sample:
                return sample[parts[0]]
        else:
            path = self.keys[name]
            if path in sample:
                return sample[path]
            value: Any = sample
            for depth, part in enumerate(parts):
                if not (isinstance(value, Mapping) and part in value):
                    if is_object_list(value, part):
                        self._refuse_object_list(name, ".".join(parts[:depth]))
                    break
                value = value[part]
            else:
                return value
        raise ValueError(
            f"{self!r}: {name}={self.keys[name]!r} matches nothing in the sample, which has "
            f"keys {describe_keys(sample)}"
        )

    def _refuse_object_list(self, name: str, where: str) -> None:
        raise ValueError(
            f"{self!r}: {name}={self.keys[name]!r} matches nothing in the sample: {where!r} "
            "is a list (of per-object dicts), and the map reads per-object lists (a dict of "
            "lists, not a list of dicts): give the samples that way (a Hugging Face "
            "dataset: declare the feature as datasets.Sequence({...}), which gives a dict "
            "of lists, not datasets.List({...}))"
        )

    def _container_of(self, sample: Mapping[str, Any]) -> Any:
        """The dict of per-object lists around the boxes, by their keys in it.

        A row of ``Dataset.flatten()`` holds them as keys with dots (``objects.bbox``,
        ``objects.id``): those, by the part after the container's path.
        """
        if self.keys["bboxes"] in sample:
            n = len(self._prefix)
            return {k[n:]: v for k, v in sample.items() if _flat(k, self._prefix)}
        value: Any = sample
        for part in self._container or ():
            value = value[part]  # the boxes were found there: it exists
        return value

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        """The targets the consumer reads (``targets``), by rankaug's names.

        Raises:
            TypeError: If ``sample`` is not a dict, or its image has an unsupported type.
            ValueError: If a path matches nothing in it, or (for a consumer that moves
                boxes) it has no target the map reads but fields that look like some.
        """
        if not isinstance(sample, Mapping):
            raise TypeError(
                f"{self!r} reads dict samples, got a sample of type {type(sample).__name__}"
            )
        sample = in_declared_dtypes(sample, self.declared_dtypes)  # Hugging Face's int64 "uint8"
        original = self._get(sample, "image", self._parts["image"])
        image, kind, mode = image_to_numpy(original)
        wrapped = is_wrapped(original)
        data: dict[str, Any] = {"image": image}
        originals: dict[str, Any] = {}
        unhanded: dict[str, Any] = {}
        first: tuple[str, ...] = ()
        additional, others = self.additional_targets, self._others
        if additional:  # those the map does not name: under their own keys, where present
            others = (*others, *((n, (n,)) for n in self._unnamed() if n in sample))
        for name, parts in others:
            value = self._get(sample, name, parts)
            if value is None:
                continue
            if name in targets:
                if self.typed_empty:  # a Hugging Face row without objects: the other rows' type
                    value = typed(value, self.typed_empty.get(self.keys.get(name, name)))
                originals[name] = value
                role = "mask" if name == "mask" else additional.get(name) if additional else None
                if role == "image":  # an additional image: in the image's layout (CxHxW)
                    data[name] = image_to_numpy(value, self.keys.get(name, name))[0]
                else:
                    data[name] = value_to_numpy(value)
                if role == "mask" and reads_first(value, kind, image.shape[:2]):
                    data[name], first = channels_last(data[name]), (*first, name)
                if is_wrapped(value):
                    own = self.box_format  # the layout's format, else the wrapper's
                    reads = (own or self.reads_box_format) if name == "bboxes" else None
                    given_as = "box_format" if own is not None else self.box_format_given_as
                    check_tv_boxes(value, reads, self.keys[name], given_as, image.shape[:2])
                    wrapped = True
                elif holds_wrapped(value):
                    wrapped = True  # instance Masks, one per object: each wrapped again
            elif name in self._per_box or name in ("masks", "segments"):
                unhanded[name] = value
        if self._container is not None:
            objects = self._container_of(sample)
            if isinstance(objects, Mapping):
                for key, value in objects.items():
                    if key in self._in_container:
                        continue
                    path = f"{self._prefix}{key}"
                    if path in targets:
                        if self.typed_empty:
                            value = typed(value, self.typed_empty.get(path))
                        originals[path] = value
                        data[path] = value_to_numpy(value)
                        wrapped = wrapped or holds_wrapped(value)
                    else:
                        unhanded[path] = value
            if "bboxes" in targets and isinstance(objects, Mapping):  # geometry left behind?
                self._refuse_unread_objects(objects)
        read = self._read | self._unnamed() if additional else self._read
        if "bboxes" in targets and not sample.keys() <= read:  # targets unread?
            where, hw, kept = self.keys["image"], image.shape[:2], self._kept
            refuse_unread(sample, known(read, data), repr(self), data.keys(), where, hw, kept)
        count = len(data["bboxes"]) if "bboxes" in data else None
        state = Handed(sample, originals, kind, mode, count, unhanded, wrapped, first)
        return data, state

    def _unnamed(self) -> frozenset[str]:
        """The additional targets the map does not name: read under their own keys."""
        return frozenset(self.additional_targets).difference(self.keys, self._read)

    def _refuse_unread_objects(self, objects: Mapping[str, Any]) -> None:
        """Refuse per-object geometry beside the boxes the map does not read (``segmentation``)."""
        others = {k: v for k, v in objects.items() if k not in self._in_container}
        found = unread_fields(others)
        if found:
            path = f"{self._prefix}{found[0]}"
            role = role_of(found[0].rpartition(".")[2])  # (a mask was told segments=)
            read = f"{role}={path!r}" if role else f"masks=, keypoints= or segments={path!r}"
            raise ValueError(
                f"{path!r} looks like boxes, masks, polygons or keypoints of each object, "
                f"which {self!r} does not read: a transform that moves the boxes would leave "
                f"it where it was; read it ({read}) or drop it"
            )

    def passthrough(self, sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
        """The per-box values the consumer does not get, and the sample's other keys (checked)."""
        if not isinstance(sample, Mapping):
            return _NOTHING
        skip = self._read | self._not_per_box  # (and flattened per-object lists: below)
        found = {k: v for k, v in sample.items() if k not in skip and not _flat(k, self._prefix)}
        for name, parts in self._others:
            if name not in targets and (name in self._per_box or name in ("masks", "segments")):
                found[name] = self._get(sample, name, parts)
        if self._container is not None:
            objects = self._container_of(sample)
            if isinstance(objects, Mapping):
                for key, value in objects.items():
                    path = f"{self._prefix}{key}"
                    if key not in self._in_container and path not in targets:
                        found[path] = value
        points = beside(sample, self._parts.get("keypoints", ()), self._read.union(targets))
        return found | points  # and those beside nested keypoints

    # writing

    def _path_of(self, name: str) -> tuple[str, ...]:
        parts = self._parts.get(name)
        if parts is not None:
            return parts
        if self._container is not None and name.startswith(self._prefix):
            return (*self._container, name[len(self._prefix) :])
        return (name,)

    def _left_over(self, state: Handed) -> dict[str, Any]:
        """The sample's top-level values the map does not read (per-box ones go stale)."""
        read = self._read | self._not_per_box | self._unnamed()
        handled = state.originals.keys() | state.unhanded.keys()
        return {k: v for k, v in state.sample.items()
                if k not in read and not (k in handled and _flat(k, self._prefix))}  # fmt: skip

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        """Write the results back where they were read, in their own types.

        Raises:
            ValueError: If the boxes (keypoints) were dropped or added but a per-box
                (per-keypoint) value was not carried along (it would be stale): the map's
                own, one beside nested keypoints, or a top-level one the default adapter finds.
        """
        assert isinstance(state, Handed)
        refuse_stale(data, state, self._left_over, self._parts.get("keypoints", ()), self._read)
        values = restored_values(
            data, state, self.additional_targets, self.reads_box_format, self.keys
        )
        if state.wrapped:  # torchvision's tv_tensors: their class back
            image = self._get(state.sample, "image", self._parts["image"])
            rewrap_values(values, {**state.originals, "image": image}, data)
        out = dict(state.sample)
        if not SIZE_KEYS.isdisjoint(out):  # Hugging Face's width and height: current
            before = height_width(self._get(out, "image", self._parts["image"]))
            assert before is not None  # an image unpacked: numpy, tensor or PIL
            sizes = resized_sizes(out, before, image_hw(data["image"]), "the sample")
            out.update((key, value) for key, value in sizes.items() if key not in self._read)
        copied: dict[tuple[str, ...], dict[str, Any]] = {(): out}
        for name, value in values.items():
            parts, path = self._path_of(name), self.keys.get(name, name)
            if len(parts) == 1:
                out[parts[0]] = value
                continue
            if path in state.sample:  # a key with dots in it (Dataset.flatten()'s)
                out[path] = value
                continue
            put(copied, parts, value)
        return out

    def __repr__(self) -> str:
        parts = [f"{name}={path!r}" for name, path in self.keys.items()]
        if self.box_format is not None:
            parts.append(f"box_format={self.box_format!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _flat(key: object, prefix: str) -> bool:
    """Whether ``key`` is a flattened per-object list's (``objects.id``, for ``objects.``)."""
    return bool(prefix) and isinstance(key, str) and key.startswith(prefix)
