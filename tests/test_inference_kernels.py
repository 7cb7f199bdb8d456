"""The compiled CPU kernels of inference (inference_kernels) and the overlapped run loop: the same
values as the torch path, exactly where the arithmetic is specified, and the threads left as found."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from inference_fixtures import LOGITS_TO_MASK_CASES, FakeModel, png_bytes, random_rgb, write_frame

from segbench.stages import inference, inference_kernels as kernels
from segbench.stages.inference import run_inference
from segbench.stages.inference_geometry import Geometry, frame_geometry
from segbench.stages.inference_resize import bilinear, device_mask, interpolation_matrix, mask_from_array


def reference_resize(x: np.ndarray, out_size: tuple[int, int]) -> np.ndarray:
    """The specified arithmetic, independently: per axis, out = fma(w_high, x[high], fl(w_low * x[low])),
    the fma computed in float64 (exact product, one rounding of the sum there, then to float32)."""

    def axis(values: np.ndarray, n_out: int, dim: int) -> np.ndarray:
        matrix = interpolation_matrix(values.shape[dim], n_out, 0, n_out, torch.device("cpu")).numpy()
        out = np.empty(values.shape[:dim] + (n_out,) + values.shape[dim + 1 :], np.float32)
        for i, row in enumerate(matrix):
            (nonzero,) = np.nonzero(row)
            low, high = (nonzero[0], nonzero[-1]) if len(nonzero) else (0, 0)
            take = lambda k: np.take(values, k, axis=dim).astype(np.float64)  # noqa: E731
            first = (np.float64(row[low]) * take(low)).astype(np.float32).astype(np.float64)
            value = first if high == low else np.float64(row[high]) * take(high) + first
            np.moveaxis(out, dim, 0)[i] = value.astype(np.float32)
        return out

    return axis(axis(x, out_size[0], 1), out_size[1], 2)


SHAPES = [((12, 17), (9, 13)), ((9, 13), (29, 40)), ((7, 11), (7, 11)), ((40, 30), (33, 47)), ((1, 5), (3, 2))]


@pytest.mark.parametrize(("in_size", "out_size"), SHAPES)
def test_resize_is_the_specified_arithmetic(in_size, out_size):
    x = np.random.default_rng(0).standard_normal((3, *in_size)).astype(np.float32) * 7
    got = kernels.resize(x, out_size)
    assert got.dtype == np.float32 and got.shape == (3, *out_size)
    assert np.array_equal(got, reference_resize(x, out_size))


@pytest.mark.parametrize(("in_size", "out_size"), SHAPES)
def test_resize_follows_the_matrix_products_and_interpolate(in_size, out_size):
    """Within one rounding of `bilinear` (BLAS may round where it splits its sums) and of F.interpolate."""
    x = torch.randn(4, *in_size, generator=torch.Generator().manual_seed(1))
    got = torch.from_numpy(kernels.resize(x.numpy(), out_size))
    torch.testing.assert_close(got, bilinear(x, out_size), rtol=2e-7, atol=2e-7)
    torch.testing.assert_close(got, F.interpolate(x[None], size=out_size, mode="bilinear")[0], rtol=1e-5, atol=1e-5)


def test_resize_window_is_the_same_values():
    x = np.random.default_rng(2).standard_normal((2, 9, 13)).astype(np.float32)
    full = kernels.resize(x, (30, 41))
    assert np.array_equal(kernels.resize(x, (30, 41), (3, 17), (5, 40)), full[:, 3:17, 5:40])
    assert np.array_equal(kernels.resize(x, (9, 13)), x)  # the same size is the identity, exactly


def test_axis_weights_are_the_matrix_entries():
    for n_in, n_out in [(5, 3), (3, 5), (480, 420), (720, 1080), (4, 4), (1, 3)]:
        low, high, w_low, w_high = kernels.axis_weights(n_in, n_out)
        dense = np.zeros((n_out, n_in), np.float32)
        np.add.at(dense, (np.arange(n_out), low), w_low)
        np.add.at(dense, (np.arange(n_out), high), w_high)
        assert np.array_equal(dense, interpolation_matrix(n_in, n_out, 0, n_out, torch.device("cpu")).numpy())


def test_argmax_is_torchs_first_maximum_and_nan():
    x = torch.randn(6, 17, 23, generator=torch.Generator().manual_seed(3))
    x[2, :5] = x[4, :5] = 9.0  # ties: the first wins
    x[3, 7, :4] = float("nan")
    x[5, 7, 2:6] = float("nan")  # two NaNs: the first wins; a NaN beats any number
    x[1, 9, :] = float("inf")
    expected = x.argmax(dim=0).to(torch.uint8).numpy()
    assert np.array_equal(kernels.argmax(x.numpy()), expected)
    strided = x[:, 2:15, 3:20]  # a cropped view, as the harness passes it
    assert np.array_equal(kernels.argmax(strided.numpy()), strided.argmax(dim=0).to(torch.uint8).numpy())


@pytest.mark.parametrize(("in_size", "out_size"), SHAPES)
def test_resize_argmax_is_argmax_of_resize(in_size, out_size):
    x = np.random.default_rng(4).standard_normal((5, *in_size)).astype(np.float32)
    x[:, 0, 0] = 1.0  # an exact tie
    expected = torch.from_numpy(kernels.resize(x, out_size)).argmax(dim=0).to(torch.uint8).numpy()
    assert np.array_equal(kernels.resize_argmax(x, out_size), expected)


@pytest.mark.parametrize(
    ("logits_hw", "geometry"),
    LOGITS_TO_MASK_CASES,
)
def test_cpu_masks_match_the_torch_path(logits_hw, geometry):
    """Wherever the torch path's top two classes are not within rounding of each other."""
    h, w = logits_hw
    logits = torch.randn(7, h, w, generator=torch.Generator().manual_seed(5))
    torch_mask = device_mask(logits, geometry).numpy()
    cpu_mask = mask_from_array(logits.numpy(), geometry)
    assert cpu_mask.shape == geometry.target and cpu_mask.dtype == np.uint8
    height, width = geometry.input
    cropped = bilinear(logits, geometry.padded, (0, height), (0, width)) if (h, w) != geometry.padded else logits
    values = bilinear(cropped[:, :height, :width], geometry.target)
    top2 = values.topk(2, dim=0).values
    clear = (top2[0] - top2[1] > 1e-4).numpy()
    assert clear.mean() > 0.99
    assert np.array_equal(cpu_mask[clear], torch_mask[clear])


def test_place_is_collate_of_load_input(tmp_path):
    frames = [
        write_frame(tmp_path, "same", random_rgb(48, 64, 0)),  # at the size: placed from uint8
        write_frame(tmp_path, "grow", random_rgb(42, 56, 1)),  # enlarged to 48x64
        write_frame(tmp_path, "shrink", random_rgb(60, 80, 2)),  # shrunk (antialiased) to 48x64
        write_frame(tmp_path, "pad", random_rgb(45, 64, 3)),  # padded at the bottom
    ]
    geometries = [frame_geometry(f, 64, 16) for f in frames]
    assert {g.padded for g in geometries} == {(48, 64)}
    pad = (10.5, 20.25, 30.125)
    with torch.inference_mode():
        images = [inference.load_input(f, g) for f, g in zip(frames, geometries)]
        expected = inference.collate(images, (48, 64), pad, False)
    assert torch.equal(inference.load_batch(frames, geometries, range(4), pad), expected)
    with pytest.raises(ValueError, match="does not fit"):
        kernels.place(np.zeros((5, 5, 3), np.uint8), np.zeros(3, np.float32), np.zeros((3, 4, 5), np.float32))


def test_run_inference_leaves_torch_threads_as_found(tmp_path):
    frames = [write_frame(tmp_path / "data", f"f{i}", random_rgb(20 + i, 30, i)) for i in range(5)]
    model = FakeModel(3, 8, lambda x: x)
    before = torch.get_num_threads()
    run_inference(model, frames, tmp_path / "out", 24, batch_size=2, progress=False)
    assert torch.get_num_threads() == before
    seen = []
    thread = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    thread.start()
    thread.join()
    assert seen == [before]


def test_outputs_do_not_depend_on_the_number_of_helper_threads(tmp_path, monkeypatch):
    frames = [write_frame(tmp_path / "data", f"f{i}", random_rgb(30 + 7 * (i % 3), 40, i)) for i in range(9)]

    def fn(x):  # logits at 1/4 resolution, so the resize kernels run
        return F.avg_pool2d(x, 4) * torch.tensor([1.0, -1.0, 0.5]).view(1, 3, 1, 1)

    model = FakeModel(3, 8, fn)
    reference = png_bytes(run_inference(model, frames, tmp_path / "a", 40, batch_size=3, progress=False))
    for name, value in [("FINISH_THREADS", 1), ("FINISH_AHEAD", 0), ("PREFETCH", 1), ("LOAD_THREADS", 3)]:
        monkeypatch.setattr(inference, name, value)
    again = png_bytes(run_inference(model, frames, tmp_path / "b", 40, batch_size=3, progress=False))
    assert again == reference


def test_masks_on_device_come_back_in_one_copy_per_batch():
    logits = torch.randn(3, 4, 16, 24, generator=torch.Generator().manual_seed(6))
    logits[1, 2, 5, 7] = float("inf")  # the middle frame's logits are not finite
    same = [Geometry((16, 24), (16, 24), (16, 24), (20, 30))] * 3
    mixed = same[:2] + [Geometry((16, 24), (16, 24), (16, 24), (16, 24))]
    for geometries in (same, mixed):
        hosts, finite, ready = inference._masks_on_device(logits, [0, 1, 2], geometries, pin=False)
        assert ready is None
        assert finite.tolist() == [True, False, True]
        for row, host in enumerate(hosts):
            assert torch.equal(host, device_mask(logits[row], geometries[row]))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_all_finite_finds_one_bad_value_anywhere(bad):
    values = np.zeros((3, 5, 7), np.float32)
    assert kernels.all_finite(values)
    assert kernels.all_finite(np.full((2, 2), np.finfo(np.float32).max, np.float32))
    for index in [(0, 0, 0), (1, 2, 3), (2, 4, 6)]:
        damaged = values.copy()
        damaged[index] = bad
        assert not kernels.all_finite(damaged)
        assert kernels.all_finite(damaged[:, :, ::2]) == (index[2] % 2 == 1)  # a strided view: the columns kept
    with pytest.raises(ValueError, match="^all_finite: float32 values expected, got float64$"):
        kernels.all_finite(np.zeros(3))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_pipeline_writes_masks(tmp_path):  # pragma: no cover - needs a GPU
    frames = [write_frame(tmp_path / "data", f"f{i}", random_rgb(30, 40, i)) for i in range(5)]
    model = FakeModel(3, 8, lambda x: x)
    model.device = torch.device("cuda")
    paths = run_inference(model, frames, tmp_path / "out", 40, batch_size=2, progress=False)
    cpu = FakeModel(3, 8, lambda x: x)
    assert png_bytes(paths) == png_bytes(run_inference(cpu, frames, tmp_path / "cpu", 40, batch_size=2, progress=False))
