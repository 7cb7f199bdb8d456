"""Frames per second of segbench's inference path against the bare forward pass of the same model.

    .venv/bin/python benchmarks/inference_speed.py [--frames 64] [--device cpu] [--rounds 5] [--threads N]

The pipeline is `segbench.stages.inference.run_inference`, the function the `segbench infer` step
(segbench.steps.inference.infer) calls, with the arguments it passes: real image files of a configured dataset
(the embedded default's Painting Vision frames in `data/` unless told otherwise), read through
the dataset's own reader from a temporary copy (real copies; the source frames are repeated to
reach --frames), decoded, resized to the benchmark's inference size, batched, run through the
model, resized to the ground-truth size, argmaxed and written as PNGs.

The bare forward pass is `model.logits(batch)` of the same loaded model on tensors pre-loaded
(on the device) for exactly the pipeline's batches: the same batch size, the same padded shapes
and frame grouping (inference.make_batches), the same torch thread count, in the same process.

The two are timed in alternating rounds (pipeline first in even rounds, bare first in odd ones)
after one warm-up of each; the ratio is computed per round (pipeline frames/s over bare
frames/s) and its median is compared with the target (--target, 0.9). The process's CPU time
(all threads, user + system) per frame of each is printed too: on a machine shared with other
work the wall-clock ratio moves with their load, while bare CPU / pipeline CPU is the share of
the pipeline's own work that is the forward pass (what the ratio tends to once the cores are
saturated). --threads sets torch's intra-op threads for both (default: torch's default).

With --device cuda the model runs on the GPU: the pipeline pins its input batches and copies
them without blocking; the bare pass times the forward on batches already on the GPU
(synchronised at the end of each pass).

    .venv/bin/python benchmarks/inference_speed.py --kinds-and-modes [--frames 16] [--rounds 3]

instead times the whole pipeline (segbench.stages.inference_modes.predict, what `segbench infer` runs)
for ONE network (the configured checkpoint, --model) in every form the harness loads: the
PyTorch checkpoint, the same weights as TorchScript (save_torchscript) and as ONNX
(export_onnx; onnxruntime's CPU provider, or CUDA's when --device cuda and it is there); and the
checkpoint in each inference mode: whole, slide (--crop, --window-stride) and multi-scale
(--scales, with and without flip). Frames/s are medians over rounds after one warm-up.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))  # run from a checkout without installing
sys.path.insert(0, str(REPO / "benchmarks"))

from copies import copy_file  # noqa: E402

from segbench.core.model_spec import ModelSpec  # noqa: E402
from segbench.models import load_model  # noqa: E402
from segbench.protocols.definitions import load_benchmark  # noqa: E402
from segbench.stages import inference  # noqa: E402
from segbench.steps.frames import frames_of_split  # noqa: E402
from segbench.workflow.config import load_config  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=64, help="frames per pass (source frames repeated)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    p.add_argument("--rounds", type=int, default=5, help="timed rounds of each (after one warm-up)")
    p.add_argument("--batch-size", type=int, help="default: the config's inference batch_size")
    p.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's default)")
    p.add_argument("--benchmark", default="painting-vision")
    p.add_argument("--model", default="best", help="model name in the config")
    p.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    p.add_argument("--data", type=Path, help="dataset folder (default: the config's for --benchmark)")
    p.add_argument("--split", help="source frames from this split only (default: every frame of the dataset)")
    p.add_argument("--target", type=float, default=0.9)
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--kinds-and-modes", action="store_true", help="frames/s per model kind and per inference mode")
    p.add_argument("--crop", type=int, nargs=2, default=[320, 320], help="slide window (with --kinds-and-modes)")
    p.add_argument("--window-stride", type=int, nargs=2, default=[213, 213], help="slide step")
    p.add_argument("--scales", type=float, nargs="+", default=[0.5, 0.75, 1.0, 1.25], help="multi-scale factors")
    return p.parse_args(argv)


def repeated_dataset(source_frames, root: Path, count: int) -> None:
    """A Painting Vision folder at `root` whose frames f0000.. cycle through `source_frames`."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir(parents=True)
    rows = []
    for i in range(count):
        frame = source_frames[i % len(source_frames)]
        frame_id = f"f{i:04d}"
        for src, dst in (
            (frame.image, root / "images" / f"{frame_id}{frame.image.suffix}"),
            (frame.label, root / "labels" / f"{frame_id}.png"),
        ):
            copy_file(src, dst)
        rows.append((frame_id, f"w{i // 4:03d}", "test"))
    with open(root / "frames.csv", "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(("frame_id", "wall_id", "split"))
        writer.writerows(rows)


def batch_of(frames, geometries, group, pad_value) -> torch.Tensor:
    """The input batch the pipeline makes for these frames (older segbench: collate of load_input)."""
    if hasattr(inference, "load_batch"):
        return inference.load_batch(frames, geometries, group, pad_value)
    with torch.inference_mode():
        return inference.collate([inference.load_input(frames[i], geometries[i]) for i in group],
                                 geometries[group[0]].padded, pad_value, False)


def cpu_seconds() -> float:
    """User + system CPU time of this process, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of fn()."""
    cpu, start = cpu_seconds(), time.perf_counter()
    fn()
    return time.perf_counter() - start, cpu_seconds() - cpu


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def source_frames(benchmark, data: Path, split: str | None):
    if split:
        return frames_of_split(benchmark, data, split)
    return sorted((f for s in benchmark.splits for f in frames_of_split(benchmark, data, s)), key=lambda f: f.frame_id)


def kinds_and_modes(args: argparse.Namespace) -> int:
    """Frames/s of the pipeline for one network per kind (checkpoint, TorchScript, ONNX) and per mode."""
    from segbench.core.model_spec import InferenceMode
    from segbench.models.checkpoint import read_checkpoint
    from segbench.models.onnx import export_onnx
    from segbench.models.torchscript import save_torchscript
    from segbench.stages.inference_modes import predict
    from timing import machine, median, rounds

    benchmark = load_benchmark(args.benchmark)
    config = load_config(args.config)
    spec = ModelSpec.from_config(config, args.model)
    if spec.kind != "checkpoint":
        raise SystemExit(f"--kinds-and-modes converts a checkpoint; model '{spec.name}' is a {spec.kind}")
    data = args.data or REPO / config["benchmarks"][args.benchmark]["data"]
    batch_size = args.batch_size or config["inference"]["batch_size"]
    size = spec.inference_size or benchmark.inference_size
    checkpoint = spec.path if spec.path.is_absolute() else REPO / spec.path
    whole = InferenceMode()
    with tempfile.TemporaryDirectory(prefix="segbench-kinds-") as tmp:
        tmp = Path(tmp)
        repeated_dataset(source_frames(benchmark, data, args.split), tmp / "data", args.frames)
        frames = frames_of_split(benchmark, tmp / "data", "test")
        cpu_model = load_model("checkpoint", checkpoint, benchmark, None, "cpu")
        save_torchscript(tmp / "model.ts", cpu_model.module, cpu_model.label_space,
                         read_checkpoint(checkpoint)["normalization"], cpu_model.stride)
        torch_model = load_model("checkpoint", checkpoint, benchmark, None, args.device)
        export_onnx(checkpoint, benchmark, tmp / "model.onnx")
        models = {
            "checkpoint (PyTorch)": torch_model,
            "torchscript": load_model("torchscript", tmp / "model.ts", benchmark, None, args.device),
            "onnx (onnxruntime)": load_model("onnx", tmp / "model.onnx", benchmark, None, args.device),
        }
        modes = {
            "whole": whole,
            "slide": InferenceMode("slide", crop=tuple(args.crop), stride=tuple(args.window_stride)),
            "multi-scale": InferenceMode("multi-scale", scales=tuple(args.scales)),
            "multi-scale +flip": InferenceMode("multi-scale", scales=tuple(args.scales), flip=True),
        }

        def run(model, mode, name):
            def go():
                out = tmp / "out" / name
                predict(model, frames, out, size, mode, batch_size, progress=False, pad_to_stride=benchmark.pad_to_stride)
                shutil.rmtree(out)
            return go

        methods = {f"kind {k}": run(m, whole, f"k{i}") for i, (k, m) in enumerate(models.items())}
        methods |= {f"mode {k}": run(torch_model, mode, f"m{i}") for i, (k, mode) in enumerate(modes.items())}
        times = rounds(methods, args.rounds)
    n = len(frames)
    figures = {name: round(n / median(t), 2) for name, t in times.items()}
    print(f"machine: {machine()}, torch {torch.__version__}, {torch.get_num_threads()} threads, device "
          f"{torch_model.device}")
    print(f"network: {spec.name} ({checkpoint.name}), size {size}, batch {batch_size}, {n} frames, "
          f"{args.rounds} rounds; slide crop {args.crop} stride {args.window_stride}; scales {args.scales}")
    for name, fps in figures.items():
        print(f"  {name:28s} {fps:8.2f} frames/s")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "frames": n, "frames_per_s": figures}, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.kinds_and_modes:
        return kinds_and_modes(args)
    benchmark = load_benchmark(args.benchmark)
    config = load_config(args.config)
    spec = ModelSpec.from_config(config, args.model)
    data = args.data or REPO / config["benchmarks"][args.benchmark]["data"]
    batch_size = args.batch_size or config["inference"]["batch_size"]
    size = spec.inference_size or benchmark.inference_size
    model = load_model(spec.kind, spec.path if spec.path.is_absolute() else REPO / spec.path, benchmark,
                       spec.label_space, args.device)
    device = model.device

    with tempfile.TemporaryDirectory(prefix="segbench-speed-") as tmp:
        tmp = Path(tmp)
        repeated_dataset(source_frames(benchmark, data, args.split), tmp / "data", args.frames)
        frames = frames_of_split(benchmark, tmp / "data", "test")  # the format's own reader

        def pipeline(out: Path) -> tuple[float, float]:
            return timed(lambda: inference.run_inference(model, frames, out, size, batch_size, progress=False,
                                                         pad_to_stride=benchmark.pad_to_stride))

        # The bare forward pass: exactly the pipeline's batches, pre-loaded on the device.
        stride = model.stride if benchmark.pad_to_stride else 1
        geometries = [inference.frame_geometry(f, size, stride) for f in frames]
        groups = inference.make_batches(geometries, batch_size)
        tensors = [batch_of(frames, geometries, group, model.pad_value).to(device) for group in groups]

        def forward_all() -> None:
            with torch.inference_mode():
                for batch in tensors:
                    model.logits(batch)
            synchronize(device)

        def bare() -> tuple[float, float]:
            synchronize(device)
            return timed(forward_all)

        load_before = os.getloadavg()
        warm_pipeline = pipeline(tmp / "first")  # also compiles (or loads) the CPU kernels
        warm_bare = bare()
        pipe_s, bare_s, pipe_cpu, bare_cpu = [], [], [], []
        for r in range(args.rounds):
            for which in ("pipeline", "bare") if r % 2 == 0 else ("bare", "pipeline"):
                if which == "pipeline":
                    wall, cpu = pipeline(tmp / "round")
                    shutil.rmtree(tmp / "round")
                    pipe_s.append(wall)
                    pipe_cpu.append(cpu)
                else:
                    wall, cpu = bare()
                    bare_s.append(wall)
                    bare_cpu.append(cpu)
        load_after = os.getloadavg()
        pipeline(tmp / "last")
        same = all((tmp / "first" / f.prediction).read_bytes() == (tmp / "last" / f.prediction).read_bytes()
                   for f in frames)

    n = len(frames)
    ratios = [(n / p) / (n / b) for p, b in zip(pipe_s, bare_s)]
    pipe_fps = [n / s for s in pipe_s]
    bare_fps = [n / s for s in bare_s]
    ratio = statistics.median(ratios)
    shapes = sorted({tuple(t.shape) for t in tensors})
    result = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "processor": platform.processor() or platform.machine(),
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "torch_interop_threads": torch.get_num_interop_threads(),
            "device": str(device) + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in load_after],
        },
        "model": f"{spec.name} ({spec.kind}, {model.label_space.name})",
        "inference_size": size,
        "batch_size": batch_size,
        "frames": n,
        "batches": len(groups),
        "batch_shapes": [list(s) for s in shapes],
        "rounds": args.rounds,
        "warmup_s": {"pipeline": round(warm_pipeline[0], 3), "bare": round(warm_bare[0], 3)},
        "pipeline_fps": [round(x, 2) for x in pipe_fps],
        "bare_fps": [round(x, 2) for x in bare_fps],
        "ratios": [round(x, 3) for x in ratios],
        "pipeline_fps_median": round(statistics.median(pipe_fps), 2),
        "bare_fps_median": round(statistics.median(bare_fps), 2),
        "ratio_median": round(ratio, 3),
        "cpu_ms_per_frame": {
            "pipeline": round(1e3 * statistics.median(pipe_cpu) / n, 1),
            "bare": round(1e3 * statistics.median(bare_cpu) / n, 1),
        },
        "cpu_ratio_median": round(statistics.median(b / p for p, b in zip(pipe_cpu, bare_cpu)), 3),
        "target": args.target,
        "met": ratio >= args.target,
        "outputs_repeatable": same,
    }
    m = result["machine"]
    print(f"machine: {m['cpu_count']} cores ({m['cpus_usable']} usable), {m['processor']}, torch {m['torch']}, "
          f"{m['torch_threads']} intra-op / {m['torch_interop_threads']} inter-op threads, device {m['device']}, "
          f"load {m['loadavg_before'][0]} -> {m['loadavg_after'][0]}")
    print(f"model {result['model']}, size {size}, batch {batch_size}, {n} frames in {len(groups)} batches "
          f"{[tuple(s) for s in shapes]}, {args.rounds} alternating rounds")
    print(f"pipeline frames/s: {result['pipeline_fps']}  median {result['pipeline_fps_median']}")
    print(f"bare     frames/s: {result['bare_fps']}  median {result['bare_fps_median']}")
    print(f"ratio per round:   {result['ratios']}  median {result['ratio_median']} "
          f"(target >= {args.target}: {'met' if result['met'] else 'NOT met'})")
    print(f"CPU time per frame (all threads): pipeline {result['cpu_ms_per_frame']['pipeline']} ms, "
          f"bare {result['cpu_ms_per_frame']['bare']} ms; bare/pipeline median {result['cpu_ratio_median']}")
    if not same:
        print("WARNING: the first and the last pipeline run wrote different bytes")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
