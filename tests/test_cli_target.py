"""Tests for rankaug.cli.target: what a TARGET may give."""

from __future__ import annotations

import pytest
from torch.utils.data import DataLoader

from rankaug.cli.target import TargetError, check_dataset
from rankaug.datasets import SyntheticDetection


class TestCheckDataset:
    @pytest.mark.parametrize("streams", [True, False])
    def test_a_dataloader_is_refused_naming_its_dataset(self, streams: bool) -> None:
        loader = DataLoader(SyntheticDetection(4, image_size=16), batch_size=2)
        with pytest.raises(TargetError) as caught:  # it iterates, but over batches
            check_dataset(loader, "m:build_loader", streams=streams)
        assert str(caught.value) == (
            "TARGET 'm:build_loader' gave a DataLoader, not a dataset: the command loads the "
            "samples through its own DataLoaders, as every rank and worker of a launch does "
            "(its batches are not samples); give the dataset inside it (loader.dataset, a "
            "SyntheticDetection)"
        )

    def test_the_dataset_inside_is_taken(self) -> None:
        dataset = SyntheticDetection(4, image_size=16)
        assert check_dataset(DataLoader(dataset).dataset, "m:f") is dataset
