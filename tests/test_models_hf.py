"""The `hf` kind for every family: tiny random-weight models built from each family's real config
class, saved with save_pretrained, loaded offline; their logits equal the module's own forward,
and for the universal families the masks equal post_process_semantic_segmentation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as T

from segbench.errors import SegbenchError
from segbench.models import load_model, output_space
from segbench.protocols.definitions import load_benchmark, load_label_space
from segbench.stages.inference_geometry import Geometry
from segbench.stages.inference_resize import mask_from_array

PRE = {"do_rescale": True, "rescale_factor": 1 / 255, "image_mean": [0.5, 0.4, 0.3], "image_std": [0.2, 0.25, 0.3]}
SWIN = dict(embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=2,
            out_features=["stage1", "stage2", "stage3", "stage4"])
TASK_WORDS = "the task is semantic"


def labels(names: list[str]) -> dict:
    return dict(id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)}, num_labels=len(names))


def tiny_tokenizer() -> T.CLIPTokenizer:
    """A character-level CLIP tokenizer: enough to tokenise OneFormer's task text offline."""
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for char in sorted(set(TASK_WORDS) - {" "}):
        vocab[char] = len(vocab)
        vocab[char + "</w>"] = len(vocab)
    return T.CLIPTokenizer(vocab=vocab, merges=[])


FAMILIES = {
    "segformer": lambda lab: T.SegformerForSemanticSegmentation(T.SegformerConfig(
        depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 24, 32], decoder_hidden_size=16,
        num_attention_heads=[1, 1, 1, 1], **lab)),
    "upernet-convnext": lambda lab: T.UperNetForSemanticSegmentation(T.UperNetConfig(
        backbone_config=T.ConvNextConfig(hidden_sizes=[8, 8, 16, 16], depths=[1, 1, 1, 1],
                                         out_features=["stage1", "stage2", "stage3", "stage4"]),
        hidden_size=16, use_auxiliary_head=False, **lab)),
    "upernet-swin": lambda lab: T.UperNetForSemanticSegmentation(T.UperNetConfig(
        backbone_config=T.SwinConfig(**SWIN), hidden_size=16, use_auxiliary_head=False, **lab)),
    "dpt": lambda lab: T.DPTForSemanticSegmentation(T.DPTConfig(
        hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32, image_size=64,
        patch_size=16, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[8, 8, 16, 16],
        fusion_hidden_size=16, use_auxiliary_head=False, **lab)),
    "beit": lambda lab: T.BeitForSemanticSegmentation(T.BeitConfig(
        hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32, image_size=64,
        patch_size=16, out_indices=[0, 1, 2, 3], pool_scales=[1, 2], use_auxiliary_head=False,
        use_relative_position_bias=True, **lab)),
    "mobilevit": lambda lab: T.MobileViTForSemanticSegmentation(T.MobileViTConfig(
        hidden_sizes=[16, 16, 16], neck_hidden_sizes=[8, 8, 8, 8, 8, 16, 16], num_attention_heads=1,
        aspp_out_channels=16, image_size=64, **lab)),
    "mobilenet_v2": lambda lab: T.MobileNetV2ForSemanticSegmentation(T.MobileNetV2Config(
        depth_multiplier=0.25, image_size=64, **lab)),
    "maskformer": lambda lab: T.MaskFormerForInstanceSegmentation(T.MaskFormerConfig(
        backbone_config=T.SwinConfig(**SWIN),
        decoder_config=T.DetrConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=1,
                                    decoder_attention_heads=1, encoder_ffn_dim=16, decoder_ffn_dim=16),
        fpn_feature_size=32, mask_feature_size=32, num_queries=4, **lab)),
    "mask2former": lambda lab: T.Mask2FormerForUniversalSegmentation(T.Mask2FormerConfig(
        backbone_config=T.SwinConfig(**SWIN), hidden_dim=32, feature_size=32, mask_feature_size=32,
        num_queries=4, encoder_layers=1, decoder_layers=2, encoder_feedforward_dim=16, dim_feedforward=16,
        num_attention_heads=2, **lab)),
    "oneformer": lambda lab: T.OneFormerForUniversalSegmentation(T.OneFormerConfig(
        backbone_config=T.SwinConfig(**SWIN), hidden_dim=32, conv_dim=32, mask_dim=32, num_queries=4,
        encoder_layers=1, decoder_layers=2, dim_feedforward=16, num_attention_heads=2, task_seq_len=24,
        text_encoder_width=16, text_encoder_context_length=24, text_encoder_num_layers=1,
        text_encoder_vocab_size=len(tiny_tokenizer()), text_encoder_n_ctx=2, encoder_feedforward_dim=16,
        query_dec_layers=1, **lab)),
}
UNIVERSAL = {"maskformer": T.MaskFormerImageProcessorPil, "mask2former": T.Mask2FormerImageProcessorPil,
             "oneformer": T.OneFormerImageProcessorPil}


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


def save_family(folder: Path, family: str, names: list[str]) -> tuple[Path, torch.nn.Module]:
    torch.manual_seed(0)
    module = FAMILIES[family](labels(names)).eval()
    module.save_pretrained(folder)
    (folder / "preprocessor_config.json").write_text(json.dumps(PRE))
    if family == "oneformer":
        tiny_tokenizer().save_pretrained(folder)
    return folder, module


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    names = load_label_space("ade20k").names
    root = tmp_path_factory.mktemp("hf")
    return {family: save_family(root / family, family, names) for family in FAMILIES}


def normalised(images: torch.Tensor) -> torch.Tensor:
    mean = torch.tensor(PRE["image_mean"]).view(1, 3, 1, 1)
    std = torch.tensor(PRE["image_std"]).view(1, 3, 1, 1)
    return (images / 255 - mean) / std


def task_inputs(folder: Path, length: int) -> torch.Tensor:
    tokens = T.AutoTokenizer.from_pretrained(folder, local_files_only=True)(
        [TASK_WORDS], padding="max_length", max_length=length, truncation=True
    )
    return torch.tensor(tokens["attention_mask"]) * torch.tensor(tokens["input_ids"])


def own_outputs(family: str, folder: Path, module: torch.nn.Module, images: torch.Tensor):
    extra = {"task_inputs": task_inputs(folder, 24).expand(len(images), -1)} if family == "oneformer" else {}
    with torch.inference_mode():
        return module(pixel_values=normalised(images), **extra)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in UNIVERSAL])
def test_semantic_family_logits_equal_the_module_forward(folders, benchmark, family):
    folder, module = folders[family]
    model = load_model("hf", folder, benchmark, "ade20k", "cpu")
    assert (model.kind, model.stride, model.output, model.label_space) == ("hf", 32, "logits", benchmark.space("ade20k"))
    assert model.square == (family == "dpt")
    torch.manual_seed(1)
    images = torch.rand(2, 3, 64, 64 if model.square else 96) * 255
    with torch.inference_mode():
        logits = model.logits(images)
    expected = own_outputs(family, folder, module, images).logits
    assert logits.shape[:2] == (2, 150)
    # segbench normalises 0..255 pixels as (x - 255 mean) / (255 std): float rounding apart, the same input
    torch.testing.assert_close(logits, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("family", list(UNIVERSAL))
def test_universal_family_masks_equal_post_process_semantic_segmentation(folders, benchmark, family):
    folder, module = folders[family]
    model = load_model("hf", folder, benchmark, "ade20k", "cpu")
    assert (model.output, model.stride) == ("scores", 32)
    torch.manual_seed(2)
    # The post-processing scales the masks to 384 x 384 (its processor's input): feed that size.
    images = torch.rand(2, 3, 384, 384) * 255
    with torch.inference_mode():
        scores = model.logits(images)
    outputs = own_outputs(family, folder, module, images)
    target = (300, 411)
    expected = UNIVERSAL[family]().post_process_semantic_segmentation(
        outputs, target_sizes=[target, target], return_segmentation_scores=True
    )
    geometry = Geometry(source=(384, 384), input=(384, 384), padded=(384, 384), target=target)
    for row in range(2):
        want = expected[row]
        torch.testing.assert_close(
            torch.nn.functional.interpolate(scores[row : row + 1], size=target, mode="bilinear", align_corners=False)[0],
            want["segmentation_scores"], rtol=0, atol=1e-6,
        )
        mask = mask_from_array(scores[row].numpy(), geometry)
        np.testing.assert_array_equal(mask, want["segmentation"].numpy().astype(np.uint8))


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
