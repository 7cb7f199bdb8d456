"""The architectures a checkpoint may name (models/architectures.py): the registry, building with
arguments, and the tiny-segnet network itself."""

from __future__ import annotations

import pytest
import torch

from model_fixtures import refused, tiny_net

from segbench.models.architectures import architecture, build, known_architectures, meta_module, register


def test_tiny_segnet_output_at_input_resolution():
    assert known_architectures() == ["tiny-segnet"]
    with torch.inference_mode():
        assert tiny_net(3)(torch.zeros(1, 3, 24, 40)).shape == (1, 3, 24, 40)
    assert refused(build, "resnet", {}, 3) == "unknown architecture 'resnet' (known: ['tiny-segnet'])"


def test_tiny_segnet_stride_and_size():
    assert architecture("tiny-segnet").stride == 8
    net = build("tiny-segnet", {"widths": [4, 8, 8]}, 3)
    # 3x3 convolutions without bias + batch-norm weight and bias, then the 1x1 classifier with bias:
    # 3*4*9+8, 4*8*9+16, 8*8*9+16, (8+8)*8*9+16, 8*3+3
    assert sum(p.numel() for p in net.parameters()) == 116 + 304 + 592 + 1168 + 27


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"num_classes": 3},
         "architecture 'tiny-segnet': 'num_classes' must not be among the arguments (it comes from the label space)"),
        ({"widths": [4, 8]},
         "architecture 'tiny-segnet': bad arguments {'widths': [4, 8]}: widths must be three positive integers, got (4, 8)"),
        ({"depth": 2},
         "architecture 'tiny-segnet': bad arguments {'depth': 2}: tiny_segnet() got an unexpected keyword argument 'depth'"),
    ],
)
def test_bad_arguments_are_named(arguments, message):
    assert refused(build, "tiny-segnet", arguments, 3) == message


def test_no_class_is_refused():
    assert refused(build, "tiny-segnet", {}, 0) == "architecture 'tiny-segnet': bad arguments {}: num_classes must be positive, got 0"


def test_a_name_registers_once():
    with pytest.raises(ValueError, match="^architecture 'tiny-segnet' registered twice$"):
        register("tiny-segnet", stride=8)(lambda num_classes: None)
    assert known_architectures() == ["tiny-segnet"]


def test_meta_module_counts_without_allocating_and_bounds_the_count():
    module = meta_module("tiny-segnet", {"widths": [4, 8, 8]}, 10)
    assert all(t.device.type == "meta" for t in module.state_dict().values())
    # by hand: convs 3*4*9 + 4*8*9 + 8*8*9 + 16*8*9, BatchNorms 4 values a channel + a count each (28 channels),
    # classifier 8*10 + 10
    assert sum(t.numel() for t in module.state_dict().values()) == 108 + 288 + 576 + 1152 + 4 * 28 + 4 + 90
    assert refused(meta_module, "tiny-segnet", {"widths": [40000, 40000, 40000]}, 10) == (
        "architecture 'tiny-segnet' {'widths': [40000, 40000, 40000]} with 10 classes has 57602120014 parameters and "
        "buffers, more than the limit of 2147483648"
    )
