"""The `hf` kind for every family: tiny random-weight models built from each family's real config
class, saved with save_pretrained beside their own image processor, loaded offline. Through the
benchmark's inference, each model receives exactly the tensor its processor makes of the resized
frame, and its masks are those of a pipeline that calls the processor, the model and the
processor's post-processing directly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import transformers as T
from inference_fixtures import random_rgb, read_png, write_frame

from segbench.errors import SegbenchError
from segbench.models import load_model, output_space
from segbench.protocols.definitions import load_benchmark, load_label_space
from segbench.stages.inference import load_input, run_inference
from segbench.stages.inference_geometry import frame_geometry, make_batches

SWIN = dict(embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=2,
            out_features=["stage1", "stage2", "stage3", "stage4"])
TASK_WORDS = "the task is semantic"
TASK_LENGTH = 24
# Settings that differ from the class defaults, so that following them is visible.
SEGFORMER_PRE = dict(image_mean=[0.5, 0.4, 0.3], image_std=[0.2, 0.25, 0.3])
INFERENCE_SIZE = 64
# (image height, width, ground-truth height, width): landscape, portrait, square, each padded to
# 64x64 (the smallest input every tiny family takes); predictions at 2x, 1x and 0.5x.
FRAMES = [(45, 70, 90, 140), (70, 45, 70, 45), (60, 60, 30, 30)]


def labels(names: list[str]) -> dict:
    return dict(id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)}, num_labels=len(names))


def tiny_tokenizer() -> T.CLIPTokenizer:
    """A character-level CLIP tokenizer: enough to tokenise OneFormer's task text offline."""
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for char in sorted(set(TASK_WORDS) - {" "}):
        vocab[char] = len(vocab)
        vocab[char + "</w>"] = len(vocab)
    return T.CLIPTokenizer(vocab=vocab, merges=[])


# family -> (the model from its config class, its own image processor as its checkpoints ship it).
FAMILIES = {
    "segformer": (lambda lab: T.SegformerForSemanticSegmentation(T.SegformerConfig(
        depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 24, 32], decoder_hidden_size=16,
        num_attention_heads=[1, 1, 1, 1], **lab)), lambda: T.SegformerImageProcessorPil(**SEGFORMER_PRE)),
    # MobileViT's segmentation model is its DeepLabV3 head (apple/deeplabv3-mobilevit-*): BGR, 0..1, no normalisation.
    "deeplabv3-mobilevit": (lambda lab: T.MobileViTForSemanticSegmentation(T.MobileViTConfig(
        hidden_sizes=[16, 16, 16], neck_hidden_sizes=[8, 8, 8, 8, 8, 16, 16], num_attention_heads=1,
        aspp_out_channels=16, image_size=64, **lab)), T.MobileViTImageProcessorPil),
    "deeplabv3-mobilevitv2": (lambda lab: T.MobileViTV2ForSemanticSegmentation(T.MobileViTV2Config(
        width_multiplier=0.25, aspp_out_channels=16, image_size=64, **lab)), T.MobileViTImageProcessorPil),
    "deeplabv3-mobilenet_v2": (lambda lab: T.MobileNetV2ForSemanticSegmentation(T.MobileNetV2Config(
        depth_multiplier=0.25, image_size=64, **lab)), T.MobileNetV2ImageProcessorPil),
    "beit": (lambda lab: T.BeitForSemanticSegmentation(T.BeitConfig(
        hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32, image_size=64,
        patch_size=16, out_indices=[0, 1, 2, 3], pool_scales=[1, 2], use_auxiliary_head=False,
        use_relative_position_bias=True, **lab)), lambda: T.BeitImageProcessorPil(do_reduce_labels=True)),
    "dpt": (lambda lab: T.DPTForSemanticSegmentation(T.DPTConfig(
        hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32, image_size=64,
        patch_size=16, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[8, 8, 16, 16],
        fusion_hidden_size=16, use_auxiliary_head=False, **lab)),
        lambda: T.DPTImageProcessorPil(keep_aspect_ratio=True, ensure_multiple_of=32, do_pad=True, size_divisor=32)),
    "upernet-convnext": (lambda lab: T.UperNetForSemanticSegmentation(T.UperNetConfig(
        backbone_config=T.ConvNextConfig(hidden_sizes=[8, 8, 16, 16], depths=[1, 1, 1, 1],
                                         out_features=["stage1", "stage2", "stage3", "stage4"]),
        hidden_size=16, use_auxiliary_head=False, **lab)), lambda: T.SegformerImageProcessorPil(**SEGFORMER_PRE)),
    "upernet-swin": (lambda lab: T.UperNetForSemanticSegmentation(T.UperNetConfig(
        backbone_config=T.SwinConfig(**SWIN), hidden_size=16, use_auxiliary_head=False, **lab)),
        T.SegformerImageProcessorPil),
    # transformers has no DINOv2 segmentation class; its backbone under UperNet, with DINOv2's processor.
    "upernet-dinov2": (lambda lab: T.UperNetForSemanticSegmentation(T.UperNetConfig(
        backbone_config=T.Dinov2Config(hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
                                       intermediate_size=32, image_size=56, patch_size=14,
                                       out_features=["stage1", "stage2", "stage3", "stage4"]),
        hidden_size=16, use_auxiliary_head=False, **lab)), T.BitImageProcessorPil),
    "maskformer": (lambda lab: T.MaskFormerForInstanceSegmentation(T.MaskFormerConfig(
        backbone_config=T.SwinConfig(**SWIN),
        decoder_config=T.DetrConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=1,
                                    decoder_attention_heads=1, encoder_ffn_dim=16, decoder_ffn_dim=16),
        fpn_feature_size=32, mask_feature_size=32, num_queries=4, **lab)), T.MaskFormerImageProcessorPil),
    "mask2former": (lambda lab: T.Mask2FormerForUniversalSegmentation(T.Mask2FormerConfig(
        backbone_config=T.SwinConfig(**SWIN), hidden_dim=32, feature_size=32, mask_feature_size=32,
        num_queries=4, encoder_layers=1, decoder_layers=2, encoder_feedforward_dim=16, dim_feedforward=16,
        num_attention_heads=2, **lab)), T.Mask2FormerImageProcessorPil),
    "oneformer": (lambda lab: T.OneFormerForUniversalSegmentation(T.OneFormerConfig(
        backbone_config=T.SwinConfig(**SWIN), hidden_dim=32, conv_dim=32, mask_dim=32, num_queries=4,
        encoder_layers=1, decoder_layers=2, dim_feedforward=16, num_attention_heads=2, task_seq_len=TASK_LENGTH,
        text_encoder_width=16, text_encoder_context_length=TASK_LENGTH, text_encoder_num_layers=1,
        text_encoder_vocab_size=len(tiny_tokenizer()), text_encoder_n_ctx=2, encoder_feedforward_dim=16,
        query_dec_layers=1, **lab)), T.OneFormerImageProcessorPil),
}
UNIVERSAL = ("maskformer", "mask2former", "oneformer")


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


def save_family(folder: Path, family: str, names: list[str]) -> tuple[Path, torch.nn.Module]:
    torch.manual_seed(0)
    build, processor = FAMILIES[family]
    module = build(labels(names)).eval()
    module.save_pretrained(folder)
    processor().save_pretrained(folder)
    if family == "oneformer":
        tiny_tokenizer().save_pretrained(folder)
    return folder, module


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    names = load_label_space("ade20k").names
    root = tmp_path_factory.mktemp("hf")
    return {family: save_family(root / family, family, names) for family in FAMILIES}


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    root = tmp_path_factory.mktemp("frames")
    return [
        write_frame(root, f"f{i}", random_rgb(h, w, seed=i), label_hw=(lh, lw)) for i, (h, w, lh, lw) in enumerate(FRAMES)
    ]


def own_pipeline(folder: Path, module: torch.nn.Module, family: str, image: torch.Tensor, padded, target):
    """One resized frame through the folder's own processor (its resize, crop and pad off: the
    benchmark's rule owns them), padded bottom/right with processed zeros to the benchmark's padded
    size, the model, the processor's post-processing at the padded size, cropped, resized to the
    ground truth, argmax (the processor has no post-processing: the logits resized as the others do).
    Returns (the model's input, the mask)."""
    processor = T.AutoImageProcessor.from_pretrained(folder, local_files_only=True, backend="pil")
    off = dict(do_resize=False, do_center_crop=False, do_pad=False, input_data_format="channels_first",
               return_tensors="pt")
    extra = {}
    if family == "oneformer":
        both = T.OneFormerProcessor(image_processor=processor, tokenizer=T.AutoTokenizer.from_pretrained(folder),
                                    task_seq_length=TASK_LENGTH)
        inputs = both(images=image.numpy(), task_inputs=["semantic"], **off)
        extra["task_inputs"] = inputs["task_inputs"]
    else:
        inputs = processor(image.numpy(), **off)
    pixels = inputs["pixel_values"]
    height, width = pixels.shape[-2:]
    pixels = F.pad(pixels, (0, padded[1] - width, 0, padded[0] - height))
    with torch.inference_mode():
        outputs = module(pixel_values=pixels, **extra)
    if hasattr(processor, "post_process_semantic_segmentation"):
        scores = processor.post_process_semantic_segmentation(
            outputs, target_sizes=[padded], return_segmentation_scores=True
        )[0]["segmentation_scores"]
    else:  # DINOv2's processor has none: the logits resized as every semantic post-processing does
        scores = F.interpolate(outputs.logits, size=padded, mode="bilinear", align_corners=False)[0]
    cropped = scores[:, :height, :width]
    resized = F.interpolate(cropped[None], size=target, mode="bilinear", align_corners=False)[0]
    return pixels, resized.argmax(dim=0).numpy().astype(np.uint8)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_sees_its_processors_tensor_and_gives_its_own_pipelines_masks(folders, frames, benchmark, tmp_path, family):
    folder, module = folders[family]
    model = load_model("hf", folder, benchmark, "ade20k", "cpu")
    assert (model.kind, model.stride, model.label_space) == ("hf", 32, benchmark.space("ade20k"))
    assert model.output == ("scores" if family in UNIVERSAL else "logits")
    assert model.square == (family == "dpt")
    received = []
    hook = model.module.register_forward_pre_hook(lambda _, args, kwargs: received.append(kwargs["pixel_values"].clone()),
                                                  with_kwargs=True)
    try:
        paths = run_inference(model, frames, tmp_path, INFERENCE_SIZE, batch_size=2, progress=False)
    finally:
        hook.remove()
    geometries = [frame_geometry(f, INFERENCE_SIZE, model.stride, model.square) for f in frames]
    assert [(g.input, g.padded) for g in geometries] == [((41, 64), (64, 64)), ((64, 41), (64, 64)), ((64, 64), (64, 64))]
    batches = make_batches(geometries, 2)
    assert len(received) == len(batches)
    agree = total = 0
    for batch, indices in zip(received, batches):
        for row, index in enumerate(indices):
            geometry = geometries[index]
            image = load_input(frames[index], geometry)
            pixels, mask = own_pipeline(folder, module, family, image, geometry.padded, geometry.target)
            torch.testing.assert_close(batch[row], pixels[0], rtol=1e-5, atol=1e-5)
            ours = read_png(paths[index])
            assert ours.shape == geometry.target
            agree += int((ours == mask).sum())
            total += mask.size
    assert agree >= 0.9999 * total, f"{family}: {total - agree} of {total} pixels differ"


def test_scores_are_query_mixtures_of_class_and_mask_probabilities():
    from segbench.models.hf import universal_scores

    class_logits = torch.tensor([[[0.0, 0.0, 0.0], [2.0, 0.0, -1.0]]])  # 2 queries, 2 classes + null
    mask_logits = torch.tensor([[[[0.0]], [[1.0]]]])  # 1x1 masks
    scores = universal_scores(class_logits, mask_logits, (1, 1))
    e = np.exp([2.0, 0.0, -1.0]) / np.exp([2.0, 0.0, -1.0]).sum()
    sig = 1 / (1 + np.exp(-1.0))
    expected = [1 / 3 * 0.5 + e[0] * sig, 1 / 3 * 0.5 + e[1] * sig]
    np.testing.assert_allclose(scores[0, :, 0, 0].numpy(), expected, rtol=1e-6)


def test_safetensors_preferred_over_a_pickle_beside_it(folders, tmp_path, benchmark):
    source, _ = folders["segformer"]
    folder = tmp_path / "both"
    folder.mkdir()
    for file in source.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    (folder / "pytorch_model.bin").write_bytes(b"not a pickle: never read")
    assert load_model("hf", folder, benchmark, "ade20k", "cpu").label_space.name == "ade20k"


def test_hf_segformer_is_an_alias_recorded_under_its_name(folders, benchmark):
    folder, _ = folders["segformer"]
    model = load_model("hf-segformer", folder, benchmark, "ade20k", "cpu")
    assert model.kind == "hf-segformer"
    assert output_space("hf-segformer", folder, benchmark, "ade20k") == output_space("hf", folder, benchmark, "ade20k")


def test_oneformer_without_its_tokenizer_is_refused(folders, tmp_path, benchmark):
    source, _ = folders["oneformer"]
    folder = tmp_path / "oneformer"
    folder.mkdir()
    for name in ("config.json", "model.safetensors", "preprocessor_config.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    with pytest.raises(SegbenchError) as info:
        load_model("hf", folder, benchmark, "ade20k", "cpu")
    assert str(info.value).startswith(
        f"{folder}: a OneFormer folder needs its tokenizer (for the task input 'the task is semantic'): "
    )


def test_cityscapes_model_enters_idd_through_the_name_mapping(tmp_path):
    idd = load_benchmark("idd20k-icvgip2020")
    names = load_label_space("cityscapes-19").names
    folder, _ = save_family(tmp_path / "cityscapes", "segformer", names)
    model = load_model("hf", folder, idd, "cityscapes-19", "cpu")
    assert model.label_space is idd.space("cityscapes-19")
    lut = idd.mapping(model.label_space, idd.space("idd-level3-misc")).lut
    level3 = idd.space("idd-level3-misc")
    assert [level3.names[lut[model.label_space.id_of(n)]] for n in ("terrain", "train", "road")] == [
        "non-drivable fallback", "vehicle fallback", "road"
    ]


def test_cityscapes_mappings_follow_the_idd_label_table():
    """Each rule of cityscapes-idd.yaml, derived independently: the IDD label whose csTrainId is the
    Cityscapes class gives the level-3 class, and the IDD level mappings carry it on."""
    import yaml

    idd = load_benchmark("idd20k-icvgip2020")
    cs = idd.space("cityscapes-19")
    table = yaml.safe_load((Path(__file__).parents[1] / "config/label_tables/idd.yaml").read_text())
    level3 = idd.space("idd-level3")
    by_train_id = {lab["csTrainId"]: lab["level3Id"] for lab in table["labels"] if lab["csTrainId"] != 255}
    expected3 = np.array([by_train_id[i] for i in range(19)])
    np.testing.assert_array_equal(idd.mapping(cs, level3).lut, expected3)
    for target in ("idd-level3-misc", "idd-level2", "idd-level1", "idd-level1-reference"):
        onward = idd.mapping(level3, idd.space(target)).lut
        np.testing.assert_array_equal(idd.mapping(cs, idd.space(target)).lut, onward[expected3], err_msg=target)
