from __future__ import annotations

import pickle
import threading

from rankaug.stream.view import Window


class TestWindow:
    def test_maps_positions_to_the_samples_at_hand(self) -> None:
        window = Window(2)
        window.entries, window.offset = [(5, "a", "A"), (6, "b", "B")], 5
        assert (len(window), window[6]) == (2, "B")

    def test_each_thread_has_its_own_samples_at_hand(self) -> None:
        window = Window(1)
        window.entries, window.offset = [(5, "a", "A")], 5
        seen: list[object] = []
        other = threading.Thread(target=lambda: seen.append((window.entries, window.offset)))
        other.start()
        other.join()
        assert seen == [((), 0)]
        assert window[5] == "A"

    def test_pickles_its_length_alone(self) -> None:
        window = Window(3)
        window.entries = [(0, "a", "A")]
        clone = pickle.loads(pickle.dumps(window))
        assert (len(clone), clone.entries, clone.offset) == (3, (), 0)
