"""core/public_private: the private units are a keyed hash's first round(fraction * n), stable,
exactly balanced, different under another secret; frames follow their unit."""

import pytest

from segbench.core.public_private import Parts, divide_frames, private_units, unit_key
from segbench.errors import SegbenchError

UNITS = ["w1", "w2", "w3", "w4", "w5"]


def test_the_keys_are_hmac_sha256_of_the_name_as_openssl_computes_them():
    # printf w4 | openssl dgst -sha256 -hmac s3cret
    assert unit_key("w4", b"s3cret") == "1c9eb78ee9a74369d61fc93a786adb0a6dc7d1325e6020a706f45e389d212c71"
    assert unit_key("w3", b"s3cret") == "6c00c0071ddb8709858e83c8ea6d039c5eaae2cb3af0b90ea29b24f5dbeccf9d"
    assert unit_key("w1", b"other") == "df1e8dcf82594b025bf1c7dfca1de47e2b973f30bc5555b893a38dfd6ccc569d"


@pytest.mark.parametrize(("fraction", "expected"), [
    # ranked by key under b"s3cret": w4 (1c9e...), w3 (6c00...), w5 (8484...), w2 (b063...), w1 (dce2...)
    (0.0, set()),
    (0.1, set()),                     # round(0.5) == 0
    (0.4, {"w4", "w3"}),              # round(2.0)
    (0.5, {"w4", "w3"}),              # round(2.5) == 2: half to even
    (0.7, {"w4", "w3", "w5", "w2"}),  # round(3.5) == 4
])
def test_the_units_with_the_smallest_keys_are_private(fraction, expected):
    assert private_units(UNITS, b"s3cret", fraction) == expected


def test_a_different_secret_gives_a_different_split():
    # under b"other": w4 (2bb5...), w2 (aea0...), w5 (d9c3...), w1 (df1e...), w3 (f1c1...)
    assert private_units(UNITS, b"other", 0.4) == {"w4", "w2"}
    assert private_units(UNITS, b"other", 0.4) != private_units(UNITS, b"s3cret", 0.4)


def test_stable_whatever_the_order_or_repetition_of_the_units():
    assert private_units(reversed(UNITS), b"s3cret", 0.4) == private_units(UNITS + UNITS, b"s3cret", 0.4) == {"w4", "w3"}


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.25, 0.3, 0.5, 0.75])
def test_exactly_balanced_for_every_size(fraction):
    for n in range(1, 60):
        units = [f"wall-{i:03d}" for i in range(n)]
        if round(fraction * n) == n:  # 0.75 of 1 or 2 units: none would be public
            with pytest.raises(SegbenchError, match="leaves no public unit"):
                private_units(units, b"k", fraction)
        else:
            assert len(private_units(units, b"k", fraction)) == round(fraction * n)


def test_each_unit_is_private_about_as_often_as_the_fraction_over_many_secrets():
    # 40 walls, 400 secrets, fraction 0.5: every wall private in 400 * 0.5 = 200 +- a few
    # standard deviations (sqrt(400 * 0.25) = 10) of the secrets; no name is favoured.
    units = [f"wall-{i:03d}" for i in range(40)]
    times = dict.fromkeys(units, 0)
    for secret in range(400):
        for unit in private_units(units, secret.to_bytes(4, "big"), 0.5):
            times[unit] += 1
    assert sum(times.values()) == 400 * 20
    assert 160 <= min(times.values()) and max(times.values()) <= 240


def test_no_units_no_private_part():
    assert private_units([], b"k", 0.5) == frozenset()


@pytest.mark.parametrize(("units", "secret", "fraction", "message"), [
    (UNITS, b"", 0.5, "the host secret that chooses the private units is empty"),
    (UNITS, b"k", 1.0, r"private_fraction 1.0 is not in \[0, 1\)"),
    (UNITS, b"k", -0.1, r"private_fraction -0.1 is not in \[0, 1\)"),
    (["w1"], b"k", 0.6, r"private_fraction 0.6 of 1 unit\(s\) leaves no public unit"),
])
def test_bad_arguments_are_refused(units, secret, fraction, message):
    with pytest.raises(SegbenchError, match=f"^{message}$"):
        private_units(units, secret, fraction)


def test_frames_are_divided_by_their_unit():
    frames = {"f1": "w1", "f2": "w4", "f3": "w3", "f4": "w4", "f5": "w2", "f6": "w5"}
    assert divide_frames(frames, b"s3cret", 0.4) == Parts(
        public_frames=frozenset({"f1", "f5", "f6"}),
        private_frames=frozenset({"f2", "f3", "f4"}),
        public_units=frozenset({"w1", "w2", "w5"}),
        private_units=frozenset({"w3", "w4"}),
    )
