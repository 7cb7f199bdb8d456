"""A correction's changes to a split, from two manifests' frame entries: by label SHA-256 only."""

from segbench.core.label_changes import LabelChanges, label_changes


def entry(frame_id: str, label: str | None, split: str = "test", image: str = "i") -> dict:
    return {"frame_id": frame_id, "split": split, "image": {"sha256": image},
            "label": None if label is None else {"sha256": label}}


def test_changed_added_and_removed_frames_of_the_split_only():
    old = [entry("a", "1"), entry("b", "2"), entry("c", "3"), entry("t", "9", split="train"), entry("n", None)]
    new = [entry("a", "1", image="other image"), entry("b", "22"), entry("d", "4"), entry("t", "99", split="train"),
           entry("n", "5")]
    changes = label_changes(old, new, "test")
    # a: only its image changed (its counts stand); the train frame is another split; n gained a label
    assert changes == LabelChanges(changed=("b", "n"), added=("d",), removed=("c",))
    assert changes.recounted == ("b", "d", "n")
    assert changes.describe() == "2 label(s) changed, 1 frame(s) added, 1 removed"
    assert changes.as_dict() == {"changed": ["b", "n"], "added": ["d"], "removed": ["c"]}


def test_the_same_labels_change_nothing():
    frames = [entry("a", "1"), entry("b", "2")]
    assert label_changes(frames, list(reversed(frames)), "test") == LabelChanges((), (), ())
