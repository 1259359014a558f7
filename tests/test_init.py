"""The top level holds what users call, and only that (issue: one home for each concern)."""

from __future__ import annotations

import rankaug

PUBLIC = {
    # wrappers and what they record
    "RandomAugmentWrapper", "MosaicDataset", "MosaicAffine", "HSVJitter",
    "MixUpDataset", "CutMixDataset", "CopyPasteDataset", "CachedDataset", "KeyedDataset",
    # the same wrappers over streams (what RandomAugmentWrapper(iterable, ...) and the
    # others return)
    "StreamingAugment", "StreamingMosaic", "StreamingMixUp", "StreamingCutMix",
    "StreamingCopyPaste",
    # what the wrappers share: box handling, partners, the mosaic's grid
    "Targets", "Partners", "MosaicGrid",
    # epochs, keys and context
    "EpochSampler", "EpochIndex", "SampleContext", "KeyedRandom", "key_words",
    "make_rng",
    # batches, sample shapes, errors, seeding
    "collate_detection", "collate_ultralytics", "BatchCollator", "BatchAugment",
    "DefaultAdapter", "adapters",
    # type-only names: records, the adapter protocol, literals
    "types",
    "SampleError", "RankaugWarning", "seed_everything", "WorkerSeeder", "__version__",
}  # fmt: skip


class TestTopLevel:
    def test_all_is_exactly_the_public_api(self) -> None:
        assert set(rankaug.__all__) == PUBLIC
        assert len(rankaug.__all__) == len(PUBLIC)

    def test_every_name_resolves(self) -> None:
        for name in rankaug.__all__:
            assert getattr(rankaug, name) is not None, name

    def test_helpers_stay_in_their_modules(self) -> None:
        for name in ("SharedEpoch", "resolve_rank", "make_seed_sequence", "stream_id",
                     "SampleDict", "PartnerSampler", "KeyTemplate", "checks"):  # fmt: skip
            assert name not in rankaug.__all__
            assert not hasattr(rankaug, name) or name == "checks", name


class TestTypes:
    def test_type_only_names_live_in_rankaug_types(self) -> None:
        names = {"MosaicRecord", "MixUpRecord", "CutMixRecord", "CopyPasteRecord",
                 "SampleAdapter", "Keying", "BoxFormat"}  # fmt: skip
        assert names <= set(rankaug.types.__all__)
        assert not names & set(rankaug.__all__)
        for name in rankaug.types.__all__:
            assert getattr(rankaug.types, name) is not None, name
