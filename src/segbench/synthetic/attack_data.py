"""The data of the boosting attack benchmark (benchmarks/ladder_attack.py, docs/server.md): a
Painting Vision test split of many walls, scaled up with the embedded generator's scene drawing,
and two honest prediction sets made by corrupting its labels, scored into per-frame counts.

Only labels are drawn (the attack never looks at an image): each wall is one scene of
painting_vision_scene.draw_scene, its label map as the generator writes it (class of each
material, 255 for void), and its frames are crops of it, so a wall's frames are correlated as
the embedded default's are; they come in pairs of one view (two shots of the same crop). A
prediction copies a frame's label and paints rectangles of wrong classes over a share of it.

The two honest sets are equally good on every wall by construction: on a pair of shots A
predicts P1 on the first and P2 on the second, B the other way round (P1, P2: two predictions
with error shares drawn apart), so the two sets' counts summed over a wall are equal, while each
is better on different frames, which is what the attack exploits. A difference between the
attack's public and private gains is then the attack's doing or its coins' chance, never a
chance difference between the two sets on the two parts. Every draw comes from numpy
Generators seeded by (seed, stream, wall).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.boosting_attack import Part
from ..core.confusion import FrameCounts, joint_histogram
from ..core.headline import headline_data
from ..core.public_private import divide_frames
from ..protocols.definitions import load_benchmark, load_label_space
from .painting_vision import SCENE_SCALE, VOID
from .painting_vision_layout import CLASS_OF_MATERIAL
from .painting_vision_scene import draw_scene

FRAME_SIZE = (128, 96)  # width, height
CLASSES = 10  # painting-vision-10
LABEL_STREAM, PREDICTION_STREAM = 0, 1
RECTANGLE_SHARE = (0.02, 0.08)  # each wrong rectangle covers this share of a frame's area


@dataclass(frozen=True)
class AttackSplit:
    frame_ids: tuple[str, ...]
    groups: dict[str, str]  # frame -> wall
    labels: tuple[np.ndarray, ...]  # uint8 (height, width) per frame


def attack_split(walls: int, frames_per_wall: int, seed: int = 0) -> AttackSplit:
    """WALLS walls of FRAMES_PER_WALL frames, frames 2k and 2k + 1 of a wall the same crop."""
    width, height = FRAME_SIZE
    scene_size = (round(width * SCENE_SCALE), round(height * SCENE_SCALE))
    frame_ids, groups, labels = [], {}, []
    for wall in range(walls):
        rng = np.random.default_rng([seed, LABEL_STREAM, wall])
        material, void = draw_scene(rng, *scene_size)
        scene = np.where(void, VOID, CLASS_OF_MATERIAL[material]).astype(np.uint8)
        for frame in range(frames_per_wall):
            if frame % 2 == 0:
                x0 = int(rng.integers(scene_size[0] - width + 1))
                y0 = int(rng.integers(scene_size[1] - height + 1))
                view = scene[y0:y0 + height, x0:x0 + width].copy()
            frame_id = f"w{wall + 1:03d}_f{frame + 1:02d}"
            frame_ids.append(frame_id)
            groups[frame_id] = f"w{wall + 1:03d}"
            labels.append(view)
    return AttackSplit(tuple(frame_ids), groups, tuple(labels))


def noisy_prediction(rng: np.random.Generator, label: np.ndarray, error_share: float) -> np.ndarray:
    """The label (void read as class 0) with wrong-class rectangles over about `error_share` of it."""
    prediction = np.where(label == VOID, 0, label).astype(np.uint8)
    height, width = label.shape
    covered = 0.0
    while covered < error_share:
        share = rng.uniform(*RECTANGLE_SHARE)
        box_width = max(1, round(width * np.sqrt(share)))
        box_height = max(1, round(height * np.sqrt(share)))
        x0, y0 = int(rng.integers(width - box_width + 1)), int(rng.integers(height - box_height + 1))
        prediction[y0:y0 + box_height, x0:x0 + box_width] = rng.integers(CLASSES)
        covered += share
    return prediction


def honest_predictions(split: AttackSplit, error_share: tuple[float, float],
                       seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The prediction masks of the honest sets A and B, per frame of the split: on each pair of
    shots, P1 and P2 (error shares uniform in `error_share`) in swapped order; a wall's odd shot
    out gets one prediction in both sets."""
    rng = np.random.default_rng([seed, PREDICTION_STREAM])
    walls: dict[str, list[int]] = {}
    for index, frame_id in enumerate(split.frame_ids):
        walls.setdefault(split.groups[frame_id], []).append(index)
    a: dict[int, np.ndarray] = {}
    b: dict[int, np.ndarray] = {}
    for shots in walls.values():
        for pair in (shots[i:i + 2] for i in range(0, len(shots), 2)):
            label = split.labels[pair[0]]
            predictions = [noisy_prediction(rng, label, rng.uniform(*error_share)) for _ in pair]
            for index, p, q in zip(pair, predictions, predictions[::-1]):
                a[index], b[index] = p, q
    order = range(len(split.frame_ids))
    return [a[i] for i in order], [b[i] for i in order]


def honest_pair(split: AttackSplit, error_share: tuple[float, float], seed: int = 0) -> tuple[FrameCounts, FrameCounts]:
    """Per-frame counts of the honest sets A and B (honest_predictions against the labels)."""
    return tuple(FrameCounts.from_histograms(split.frame_ids, [joint_histogram(label, mask) for label, mask
                                                               in zip(split.labels, masks)])
                 for masks in honest_predictions(split, error_share, seed))


def attack_parts(walls: int, frames_per_wall: int, secret: bytes, private_fraction: float,
                 error_share: tuple[float, float], seed: int = 0) -> tuple[Part, Part]:
    """The public and private parts (walls divided by the keyed hash) of both honest sets'
    Painting Vision headline data (shared_metrics.mIoU)."""
    benchmark, space = load_benchmark("painting-vision"), load_label_space("painting-vision-10")
    split = attack_split(walls, frames_per_wall, seed)
    a, b = honest_pair(split, error_share, seed)
    divided = divide_frames(split.groups, secret, private_fraction)
    public, private = (Part(headline_data(benchmark, a, space, split.groups, frames),
                            headline_data(benchmark, b, space, split.groups, frames))
                       for frames in (divided.public_frames, divided.private_frames))
    return public, private
