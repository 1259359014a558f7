from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rankaug import MosaicDataset
from rankaug.datasets import SyntheticDetection
from rankaug.mosaic.record import read_record, state_text

GOOD = {"indices": [3, 1, 2, 0], "epoch": 2, "state": "ff:1"}


class TestReadRecord:
    def test_reads_the_main_index_epoch_and_state(self) -> None:
        generator = np.random.default_rng(7)
        state = generator.bit_generator.state["state"]
        replay = read_record({**GOOD, "state": state_text(state)}, None, 4)
        assert (replay.main, replay.epoch) == (3, 2)
        assert replay.generator.random() == generator.random()
        assert read_record(GOOD, 3, 4).main == 3
        with pytest.raises(ValueError, match=r"^index must be the record's main index"):
            read_record(GOOD, 1, 4)

    # these raised a bare KeyError or nothing at all before (issue 9, item 12)
    @pytest.mark.parametrize(
        ("record", "index", "error", "message"),
        [
            ([1, 2], None, TypeError, "record must be a MosaicRecord .* of type list"),
            ({"indices": [1]}, None, ValueError, "without 'epoch', 'state'"),
            (
                {**GOOD, "indices": [4]},
                None,
                ValueError,
                r"record\['indices'\]\[0\] must be an integer in \[0, 3\], got 4",
            ),
            ({**GOOD, "indices": [-1]}, None, ValueError, r"record\['indices'\]\[0\] must be"),
            ({**GOOD, "indices": []}, None, ValueError, r"record\['indices'\] must be a non-empty"),
            ({**GOOD, "indices": "3"}, None, TypeError, r"record\['indices'\] must be a non-empty"),
            (
                {**GOOD, "indices": ["3"]},
                None,
                TypeError,
                r"record\['indices'\]\[0\] must be an integer",
            ),
            (GOOD, 9, ValueError, r"index must be an integer in \[0, 3\], got 9"),
            (GOOD, 1.0, TypeError, "index must be an integer"),
            (
                {**GOOD, "epoch": -1},
                None,
                ValueError,
                r"record\['epoch'\] must be an integer in \[0, 2\*\*32\), got -1",
            ),
            ({**GOOD, "epoch": "2"}, None, TypeError, r"record\['epoch'\] must be an integer"),
            (
                {**GOOD, "state": 5},
                None,
                TypeError,
                r"record\['state'\] must be a 'state:inc' pair",
            ),
            (
                {**GOOD, "state": "ff"},
                None,
                ValueError,
                r"record\['state'\] must be a 'state:inc' pair",
            ),
            ({**GOOD, "state": "xyz:1"}, None, ValueError, r"record\['state'\] must be"),
        ],
    )
    def test_bad_records_name_the_field(
        self, record: Any, index: Any, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            read_record(record, index, 4)
        mosaic = MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, output_size=16)
        with pytest.raises(error, match=message):
            mosaic.replay(record, index)


class TestStateText:
    def test_hexadecimal_state_and_increment(self) -> None:
        assert state_text({"state": 2**100, "inc": 11}) == f"{2**100:x}:b"
