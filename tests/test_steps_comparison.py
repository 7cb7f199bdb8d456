"""The subjects a comparison reads from stored counts (segbench.steps.comparison): the model, its
baseline and the floor, each named by its counts or as asked."""

from counts_fixtures import write_shard

from segbench.protocols.definitions import load_benchmark
from segbench.steps.comparison import comparison_subjects, read_subject

PV = load_benchmark("painting-vision")
TEN = PV.space("painting-vision-10")


def test_subjects_are_named_by_the_counts_or_as_asked(tmp_path):
    model = write_shard(tmp_path, "model", ["a"], [(0, 1, 1, 5)])
    floor = write_shard(tmp_path, "floor", ["a"], [(0, 1, 0, 5)], model="floor")
    assert read_subject(PV, []) is None
    assert read_subject(PV, [model], "renamed").name == "renamed"
    subjects = comparison_subjects(PV, [model], [], [floor])
    assert subjects["baseline"] is None
    assert (subjects["model"].name, subjects["floor"].name) == ("best", "floor")
    assert subjects["floor"].counts.pred.tolist() == [0] and subjects["model"].space is TEN
