"""The shared training loop's crops: flips that swap left and right classes, class-balanced centres."""

from __future__ import annotations

import numpy as np

from segbench.protocols.definitions import load_label_space
from segbench.synthetic.training import Crops, batches, class_lut, class_pixels


def test_flipped_crops_swap_mirrored_classes():
    image = np.zeros((6, 6, 3), np.uint8)
    image[:, :3] = 200  # the bright left half is the left brow
    label = np.array([[3, 3, 3, 4, 4, 255]] * 6, np.uint8)
    crops = Crops(size=6, batch=1, flip=load_label_space("easyportrait-9").mirrored_ids())
    seen = set()
    for images, labels in batches([(image, label)], class_lut(9), 20, crops, np.random.default_rng(0)):
        flipped = bool(images[0, 0, 0, 0] == 0)
        seen.add(flipped)
        expected = np.array([[255, 3, 3, 4, 4, 4]] * 6) if flipped else label  # mirrored, left <-> right
        assert (labels[0].numpy() == expected).all()
    assert seen == {True, False}


def test_no_flips():
    label = np.array([[3, 4]] * 2, np.uint8)
    for _, labels in batches([(np.zeros((2, 2, 3), np.uint8), label)], class_lut(9), 10, Crops(size=2, batch=2, flip=None),
                             np.random.default_rng(0)):
        assert (labels.numpy() == label).all()


def test_balanced_crops_centre_on_every_class():
    label = np.zeros((40, 40), np.uint8)
    label[38:, 38:] = 5  # a tiny class in a corner
    pixels = class_pixels(label, class_lut(9))
    assert [len(p) for p in pixels] == [1600 - 4, 4]
    hits = 0
    for _, labels in batches([(np.zeros((40, 40, 3), np.uint8), label)], class_lut(9), 50, Crops(size=8, batch=2, balanced=True, flip=None),
                             np.random.default_rng(1)):
        hits += int((labels.numpy() == 5).any(axis=(1, 2)).sum())
    assert hits > 30  # about half the crops hold the tiny class; uniform crops would almost never
