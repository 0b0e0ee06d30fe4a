#!/usr/bin/python3
"""Writes the per-layer gradient tensor tables that collbench --model-gradients replays.

Each network is encoded below, layer by layer, from its canonical definition (the source is named
in every function and in every CSV header). A table has one row per learnable tensor, in the order
backward produces them, with the forward FLOPs per sample (2 x multiply-accumulates) of the layer
that owns the tensor written on that layer's weight row.

Backward order:
  * Layers come in reverse definition order. Caffe runs Backward over its layer list in reverse, so
    this is exactly what Caffe does, including where GoogLeNet's auxiliary heads sit: their layers
    are defined right after inception_4a/output (loss1/*) and inception_4d/output (loss2/*), so
    their gradients appear after inception_4b's (loss1) and inception_4e's (loss2) and before those
    of the inception block they branch from. For torchvision the order is the reverse of
    model.parameters(), the order PyTorch's DistributedDataParallel assigns gradients to buckets.
  * Within a layer: Caffe and MXNet list the layer's blobs in declaration order (weight then bias;
    a Scale layer's scale then bias), the order a per-layer callback iterates them; torchvision
    rows are the exact reverse of model.parameters(), so bias precedes weight. All tensors of one
    layer become ready at the same moment (when that layer's backward finishes).

FLOPs: convolution 2*Cout*Hout*Wout*(Cin/groups)*k*k, fully connected 2*in*out; bias additions are
not counted. Affine normalisation layers (torchvision BatchNorm, Caffe Scale) get 2 FLOPs per output
element on their gamma/scale row. Pooling, ReLU, LRN, concat and loss layers own no tensors and are
not counted.

Run: /usr/bin/python3 bench/models/generate.py   (standard library only; rewrites the CSVs beside it)
"""

import math
import os
import sys

# (model, variant) -> (tensors, elements) that the tables must reproduce exactly. The first group
# is the totals for the stock definitions listed in the project's reference
# (shared/reference/paper.md, "Gradient tensors of the three networks"; not numbers from the
# paper); the second is our own count from each definition, derived by hand from the reference's
# numbers (see each function).
EXPECTED = {
    ("alexnet", "bvlc_caffe"): (16, 60965224),
    ("alexnet", "torchvision"): (16, 61100840),
    ("alexnet", "mxnet"): (16, 62378344),
    ("googlenet", "bvlc_caffe"): (128, 13378280),
    ("googlenet", "bvlc_caffe_noaux"): (116, 6998552),
    ("googlenet", "torchvision"): (173, 6624904),
    ("resnet50", "caffe_he"): (162, 25557096),
    ("resnet50", "torchvision"): (161, 25557032),
    # tf_cnn_benchmarks: 1001 classes (benchmark_cnn.py: nclass = num_classes + 1).
    # AlexNet: torchvision's layers but conv4 384->384 (+384*128*9 + 128), conv5 384->256
    #   (+128*256*9) and fc8 to 1001 (+4097): 61,100,840 + 442,496 + 294,912 + 4,097.
    ("alexnet", "tf_cnn_benchmarks"): (16, 61842345),
    # GoogLeNet: BVLC without aux heads, fc to 1001: 6,998,552 + 1024 + 1.
    ("googlenet", "tf_cnn_benchmarks"): (116, 6999577),
    # ResNet-50 v1: torchvision's 53 convs and 53 BN (gamma, beta), fc to 1001: + 2048 + 1.
    ("resnet50", "tf_cnn_benchmarks"): (161, 25559081),
    # MXNet GoogLeNet = BVLC without aux heads (paper.md).
    ("googlenet", "mxnet"): (116, 6998552),
    # MXNet ResNet-50 (pre-activation): 53 convs without bias, 51 BN (bn_data 3, bn0 64, 3 per
    # unit: input, width, width; final 2048: 22,787 channels), fc1: 25,557,032 - 2*26,560
    # (torchvision's 53 BN) + 2*22,787.
    ("resnet50", "mxnet"): (157, 25549486),
    # Caffe ResNet-50 with the 53 BatchNorm layers' blobs (mean C, variance C, factor 1):
    # 162 + 3*53 tensors, 25,557,096 + 2*26,560 + 53 elements.
    ("resnet50", "caffe_he_all_blobs"): (321, 25610269),
    # torchvision GoogLeNet with aux_logits=True: + 2 x (BasicConv2d(in, 128, 1) + fc1 2048x1024
    # + fc2 1024x1000) = 7 tensors each; in = 512 (aux1), 528 (aux2).
    ("googlenet", "torchvision_aux"): (187, 13004888),
}


def out_size(size, kernel, stride=1, pad=0, ceil=False):
    """Spatial output size. Caffe convolutions floor; Caffe pooling rounds up (ceil)."""
    span = size + 2 * pad - kernel
    steps = -(-span // stride) if ceil else span // stride
    return steps + 1


class Net:
    """Layers in forward (definition) order; each owns its tensors in declaration order."""

    def __init__(self, model, variant, source, input_size, within_layer, notes=(), order=None):
        self.model, self.variant, self.source = model, variant, source
        self.input_size = input_size
        self.within_layer = within_layer  # "declared" or "reversed"
        self.notes = list(notes)
        self.order = order or ORDER_TEXT[within_layer]  # the "# backward order:" line
        self.layers = []  # (name, [(tensor, shape)], flops)

    def add(self, name, tensors, flops):
        self.layers.append((name, tensors, flops))

    def conv(self, name, cin, cout, k, size, stride=1, pad=0, groups=1, bias=True):
        """Adds a square convolution on a size x size input; returns the output size."""
        out = out_size(size, k, stride, pad)
        tensors = [("weight", (cout, cin // groups, k, k))]
        if bias:
            tensors.append(("bias", (cout,)))
        self.add(name, tensors, 2 * cout * out * out * (cin // groups) * k * k)
        return out

    def fc(self, name, cin, cout):
        self.add(name, [("weight", (cout, cin)), ("bias", (cout,))], 2 * cin * cout)

    def affine(self, name, channels, size, gamma="weight", beta="bias"):
        """BatchNorm's affine part (torchvision) or a Caffe Scale layer with bias_term."""
        self.add(name, [(gamma, (channels,)), (beta, (channels,))], 2 * channels * size * size)

    def statistics(self, name, channels):
        """A Caffe BatchNorm layer: its three blobs (mean, variance, moving-average factor) are
        not gradients, but Caffe's solvers treat every layer blob as a parameter and all-reduce
        them. The normalisation's FLOPs stay on the Scale layer's row, as in the 162-blob table."""
        self.add(name, [("mean", (channels,)), ("variance", (channels,)), ("factor", (1,))], 0)

    def rows(self):
        """(layer, tensor, shape, flops) in backward order."""
        for name, tensors, flops in reversed(self.layers):
            owned = [(t, s, flops if i == 0 else 0) for i, (t, s) in enumerate(tensors)]
            if self.within_layer == "reversed":
                owned.reverse()
            for tensor, shape, f in owned:
                yield name, tensor, shape, f


# ---------------------------------------------------------------------------------------- AlexNet


def alexnet_caffe(variant, groups, source, input_size, names, notes):
    """BVLC reference AlexNet (group=2 on conv2/4/5) or the MXNet symbol (no groups). 227 input:
    conv1 11/4 -> 55, pool 3/2 -> 27, conv2 -> 27, pool -> 13, conv3-5 -> 13, pool -> 6."""
    net = Net("alexnet", variant, source, input_size, "declared", notes)
    s = net.conv(names[0], 3, 96, 11, input_size, stride=4)  # 55
    s = out_size(s, 3, 2, ceil=True)  # pool1: 27
    s = net.conv(names[1], 96, 256, 5, s, pad=2, groups=groups)  # 27
    s = out_size(s, 3, 2, ceil=True)  # pool2: 13
    s = net.conv(names[2], 256, 384, 3, s, pad=1)  # 13
    s = net.conv(names[3], 384, 384, 3, s, pad=1, groups=groups)  # 13
    s = net.conv(names[4], 384, 256, 3, s, pad=1, groups=groups)  # 13
    s = out_size(s, 3, 2, ceil=True)  # pool5: 6
    net.fc(names[5], 256 * s * s, 4096)  # 9216 -> 4096
    net.fc(names[6], 4096, 4096)
    net.fc(names[7], 4096, 1000)
    return net


def alexnet_bvlc():
    return alexnet_caffe(
        "bvlc_caffe", 2, "BVLC/caffe models/bvlc_alexnet/train_val.prototxt", 227,
        ["conv1", "conv2", "conv3", "conv4", "conv5", "fc6", "fc7", "fc8"],
        ["input 227x227 is the prototxt's crop_size"])


def alexnet_mxnet():
    return alexnet_caffe(
        "mxnet", 1, "apache/mxnet example/image-classification/symbols/alexnet.py", 227,
        ["convolution0", "convolution1", "convolution2", "convolution3", "convolution4",
         "fullyconnected0", "fullyconnected1", "fullyconnected2"],
        ["the symbol's conv1 has no padding, so only 227 gives pool5 6x6 and the "
         "9216-wide fc6 behind the reference total (224 would give 5x5 and 4096x6400)",
         "layer names are MXNet's automatic names (the symbol names none of them)"])


def alexnet_torchvision():
    """torchvision AlexNet, 224 input: conv1 11/4 pad 2 -> 55, pool 3/2 -> 27, conv2 -> 27,
    pool -> 13, conv3-5 -> 13, pool -> 6 (AdaptiveAvgPool2d(6) is then the identity)."""
    net = Net("alexnet", "torchvision", "pytorch/vision torchvision/models/alexnet.py", 224,
              "reversed")
    s = net.conv("features.0", 3, 64, 11, 224, stride=4, pad=2)  # 55
    s = out_size(s, 3, 2)  # 27
    s = net.conv("features.3", 64, 192, 5, s, pad=2)  # 27
    s = out_size(s, 3, 2)  # 13
    s = net.conv("features.6", 192, 384, 3, s, pad=1)  # 13
    s = net.conv("features.8", 384, 256, 3, s, pad=1)  # 13
    s = net.conv("features.10", 256, 256, 3, s, pad=1)  # 13
    s = out_size(s, 3, 2)  # 6
    net.fc("classifier.1", 256 * s * s, 4096)
    net.fc("classifier.4", 4096, 4096)
    net.fc("classifier.6", 4096, 1000)
    return net


def alexnet_tf():
    """tf_cnn_benchmarks AlexNet (models/alexnet_model.py): image 224 + 3 = 227, conv 64 11/4
    VALID -> 55, max pool 3/2 VALID -> 27, conv 192 5x5 SAME, pool -> 13, conv 384, 384, 256 3x3
    SAME, pool -> 6, affine 4096, 4096, then the classifier benchmark_cnn.py adds (1001 classes:
    ImageNet's 1000 plus a background class). Every conv and affine has a bias."""
    net = Net("alexnet", "tf_cnn_benchmarks",
              "tensorflow/benchmarks scripts/tf_cnn_benchmarks/models/alexnet_model.py", 227,
              "declared", ["classifier to 1001 classes (benchmark_cnn.py: nclass = num_classes + 1)",
                           "layer names are tf_cnn_benchmarks' variable scopes (conv0.., affine0..)"])
    s = net.conv("conv0", 3, 64, 11, 227, stride=4)  # 55
    s = out_size(s, 3, 2)  # 27
    s = net.conv("conv1", 64, 192, 5, s, pad=2)  # 27
    s = out_size(s, 3, 2)  # 13
    s = net.conv("conv2", 192, 384, 3, s, pad=1)
    s = net.conv("conv3", 384, 384, 3, s, pad=1)
    s = net.conv("conv4", 384, 256, 3, s, pad=1)
    s = out_size(s, 3, 2)  # 6
    net.fc("affine0", 256 * s * s, 4096)
    net.fc("affine1", 4096, 4096)
    net.fc("affine2", 4096, 1001)
    return net


# -------------------------------------------------------------------------------------- GoogLeNet

# name, in, #1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj (Szegedy et al., Table 1)
INCEPTIONS = [
    ("3a", 192, 64, 96, 128, 16, 32, 32),
    ("3b", 256, 128, 128, 192, 32, 96, 64),
    ("4a", 480, 192, 96, 208, 16, 48, 64),
    ("4b", 512, 160, 112, 224, 24, 64, 64),
    ("4c", 512, 128, 128, 256, 24, 64, 64),
    ("4d", 512, 112, 144, 288, 32, 64, 64),
    ("4e", 528, 256, 160, 320, 32, 128, 128),
    ("5a", 832, 256, 160, 320, 32, 128, 128),
    ("5b", 832, 384, 192, 384, 48, 128, 128),
]


def googlenet_caffe(aux):
    """BVLC GoogLeNet, 224 input: conv1 7/2 -> 112, pool 3/2 (ceil) -> 56, conv2 -> 56,
    pool -> 28, inception 3a/3b at 28, pool -> 14, 4a-4e at 14, pool -> 7, 5a/5b at 7,
    average pool 7 -> 1, loss3/classifier. The auxiliary heads average-pool 5/3 from 14 to 4,
    then 1x1 conv to 128 channels (128*4*4 = 2048), fc 1024, classifier 1000."""
    variant = "bvlc_caffe" if aux else "bvlc_caffe_noaux"
    notes = []
    if aux:
        notes.append("with the two auxiliary classifiers loss1/* (on inception_4a) and loss2/* "
                     "(on inception_4d), as trained")
    else:
        notes.append("auxiliary classifiers removed (what deploy.prototxt and the MXNet symbol hold)")
    net = Net("googlenet", variant, "BVLC/caffe models/bvlc_googlenet/train_val.prototxt", 224,
              "declared", notes)
    s = net.conv("conv1/7x7_s2", 3, 64, 7, 224, stride=2, pad=3)  # 112
    s = out_size(s, 3, 2, ceil=True)  # 56
    s = net.conv("conv2/3x3_reduce", 64, 64, 1, s)  # 56
    s = net.conv("conv2/3x3", 64, 192, 3, s, pad=1)  # 56
    s = out_size(s, 3, 2, ceil=True)  # 28
    for name, cin, c1, r3, c3, r5, c5, pp in INCEPTIONS:
        if name in ("4a", "5a"):
            s = out_size(s, 3, 2, ceil=True)  # pool3: 28 -> 14, pool4: 14 -> 7
        p = "inception_" + name + "/"
        net.conv(p + "1x1", cin, c1, 1, s)
        net.conv(p + "3x3_reduce", cin, r3, 1, s)
        net.conv(p + "3x3", r3, c3, 3, s, pad=1)
        net.conv(p + "5x5_reduce", cin, r5, 1, s)
        net.conv(p + "5x5", r5, c5, 5, s, pad=2)
        net.conv(p + "pool_proj", cin, pp, 1, s)  # after a 3/1 max pool
        if aux and name in ("4a", "4d"):
            head = "loss1/" if name == "4a" else "loss2/"
            a = out_size(s, 5, 3)  # 14 -> 4
            a = net.conv(head + "conv", c1 + c3 + c5 + pp, 128, 1, a)
            net.fc(head + "fc", 128 * a * a, 1024)
            net.fc(head + "classifier", 1024, 1000)
    net.fc("loss3/classifier", 1024, 1000)
    return net


def googlenet_plain(variant, source, name_of, classes, notes):
    """GoogLeNet without auxiliary heads, every conv with a bias, BVLC's spatial sizes (224 ->
    112 -> 56 -> 28 -> 14 -> 7). name_of(kind, block) names a layer: kind is conv1..conv3 (stem,
    block None), 1x1, 3x3_reduce, 3x3, 5x5_reduce, 5x5, proj (block "3a".."5b") or fc."""
    net = Net("googlenet", variant, source, 224, "declared", notes)
    s = net.conv(name_of("conv1", None), 3, 64, 7, 224, stride=2, pad=3)  # 112
    s = out_size(s, 3, 2, ceil=True)  # 56
    s = net.conv(name_of("conv2", None), 64, 64, 1, s)
    s = net.conv(name_of("conv3", None), 64, 192, 3, s, pad=1)
    s = out_size(s, 3, 2, ceil=True)  # 28
    for block, cin, c1, r3, c3, r5, c5, pp in INCEPTIONS:
        if block in ("4a", "5a"):
            s = out_size(s, 3, 2, ceil=True)
        net.conv(name_of("1x1", block), cin, c1, 1, s)
        net.conv(name_of("3x3_reduce", block), cin, r3, 1, s)
        net.conv(name_of("3x3", block), r3, c3, 3, s, pad=1)
        net.conv(name_of("5x5_reduce", block), cin, r5, 1, s)
        net.conv(name_of("5x5", block), r5, c5, 5, s, pad=2)
        net.conv(name_of("proj", block), cin, pp, 1, s)
    net.fc(name_of("fc", None), 1024, classes)
    return net


def googlenet_tf():
    """tf_cnn_benchmarks GoogLeNet (models/googlenet_model.py): inception v1 without auxiliary
    heads, SAME max pools 3/2 (so BVLC's sizes), convs with biases, classifier to 1001. Layer
    names follow tf_cnn_benchmarks' global conv counter (conv0 .. conv56, affine0)."""
    counter = iter(range(57))
    return googlenet_plain(
        "tf_cnn_benchmarks",
        "tensorflow/benchmarks scripts/tf_cnn_benchmarks/models/googlenet_model.py",
        lambda kind, block: "affine0" if kind == "fc" else "conv%d" % next(counter), 1001,
        ["no auxiliary heads",
         "classifier to 1001 classes (benchmark_cnn.py: nclass = num_classes + 1)"])


def googlenet_mxnet():
    """MXNet's GoogLeNet symbol (example/image-classification/symbols/googlenet.py):
    ConvFactory = conv with bias + ReLU, no auxiliary heads, fc to 1000 (paper.md: the same
    tensors as BVLC without heads). Its pools use MXNet's default 'valid' (floor) convention,
    which at 224 gives 55/27/13/6 maps and a final 7x7 pool larger than its 6x6 input; the FLOPs
    use Caffe's ceil sizes (MXNet's pooling_convention='full'), with which the symbol runs."""
    def name_of(kind, block):
        if kind == "fc":
            return "fullyconnected0"  # MXNet's automatic name: the symbol names none
        return "conv_" + (kind if block is None else "in%s_%s" % (block, kind))
    return googlenet_plain(
        "mxnet", "apache/mxnet example/image-classification/symbols/googlenet.py", name_of, 1000,
        ["no auxiliary heads",
         "pool sizes: Caffe's ceil convention (pooling_convention='full'); with the symbol's "
         "default floor pools the final 7x7 average pool does not fit a 224 input"])


def googlenet_torchvision(aux):
    """torchvision GoogLeNet, 224 input, same spatial sizes as BVLC. Every BasicConv2d is a conv
    without bias plus BatchNorm2d(eps=0.001) with weight and bias; the "5x5" branch really uses
    a 3x3 kernel (pytorch/vision issue 906). With aux_logits=True (the default when training
    from scratch) InceptionAux heads follow inception4a (aux1, 512 channels) and inception4d
    (aux2, 528): adaptive average pool to 4x4, BasicConv2d(in, 128, 1), fc1 2048 -> 1024,
    fc2 1024 -> 1000."""
    notes = ["branch3 uses 3x3 kernels, as in torchvision"]
    order = None
    if aux:
        notes.insert(0, "aux_logits=True: aux1 (after inception4a) and aux2 (after inception4d), "
                        "as it trains by default")
        order = ("layers in the order backward reaches them (forward execution reversed: aux2 "
                 "after inception4e, aux1 after inception4b), the order DDP rebuilds its buckets "
                 "in after the first iteration; model.parameters() lists the heads after "
                 "inception5b. Within a layer bias precedes weight (reverse of parameters())")
    else:
        notes.insert(0, "aux_logits=False (no auxiliary heads)")
    net = Net("googlenet", "torchvision_aux" if aux else "torchvision",
              "pytorch/vision torchvision/models/googlenet.py", 224, "reversed", notes, order)

    def basic(name, cin, cout, k, size, stride=1, pad=0):
        out = net.conv(name + ".conv", cin, cout, k, size, stride, pad, bias=False)
        net.affine(name + ".bn", cout, out)
        return out

    s = basic("conv1", 3, 64, 7, 224, stride=2, pad=3)  # 112
    s = out_size(s, 3, 2, ceil=True)  # 56
    s = basic("conv2", 64, 64, 1, s)  # 56
    s = basic("conv3", 64, 192, 3, s, pad=1)  # 56
    s = out_size(s, 3, 2, ceil=True)  # 28
    for name, cin, c1, r3, c3, r5, c5, pp in INCEPTIONS:
        if name == "4a":
            s = out_size(s, 3, 2, ceil=True)  # maxpool3: 14
        if name == "5a":
            s = out_size(s, 2, 2, ceil=True)  # maxpool4 (2/2): 7
        p = "inception" + name + "."
        basic(p + "branch1", cin, c1, 1, s)
        basic(p + "branch2.0", cin, r3, 1, s)
        basic(p + "branch2.1", r3, c3, 3, s, pad=1)
        basic(p + "branch3.0", cin, r5, 1, s)
        basic(p + "branch3.1", r5, c5, 3, s, pad=1)
        basic(p + "branch4.1", cin, pp, 1, s)
        if aux and name in ("4a", "4d"):
            head = "aux1." if name == "4a" else "aux2."
            a = 4  # adaptive_avg_pool2d(x, (4, 4))
            basic(head + "conv", c1 + c3 + c5 + pp, 128, 1, a)
            net.fc(head + "fc1", 128 * a * a, 1024)
            net.fc(head + "fc2", 1024, 1000)
    net.fc("fc", 1024, 1000)
    return net


# -------------------------------------------------------------------------------------- ResNet-50

STAGES = [(2, 3, 64, 1), (3, 4, 128, 2), (4, 6, 256, 2), (5, 3, 512, 2)]  # stage, blocks, width, stride


def resnet50_caffe_he(all_blobs):
    """Kaiming He's ResNet-50, 224 input: conv1 7/2 (with bias) -> 112, max pool 3/2 (ceil) -> 56,
    res2 at 56, res3 at 28, res4 at 14, res5 at 7, average pool 7 -> 1, fc1000. Every convolution
    but conv1 has no bias and is followed by BatchNorm (bn*, statistics) and a Scale layer with
    bias (scale*). The stride-2 of res3a/res4a/res5a sits on branch2a (the first 1x1) and
    branch1 (the projection). Layers are defined branch1, branch2a, 2b, 2c per block.
    all_blobs: the BatchNorm layers' blobs too, as stock Caffe all-reduces them (321 tensors)."""
    if all_blobs:
        notes = ["every blob Caffe all-reduces: the BatchNorm layers' mean, variance and "
                 "moving-average factor blobs too (Caffe's solvers and its multi-GPU sync treat "
                 "every layer blob as a parameter)"]
    else:
        notes = ["BatchNorm layers' mean/variance/moving-average blobs are statistics, not "
                 "gradients; stock Caffe would also all-reduce them (variant caffe_he_all_blobs)"]
    net = Net("resnet50", "caffe_he_all_blobs" if all_blobs else "caffe_he",
              "KaimingHe/deep-residual-networks prototxt/ResNet-50-deploy.prototxt", 224,
              "declared", notes)

    def normalise(suffix, channels, size):
        if all_blobs:
            net.statistics("bn" + suffix, channels)
        net.affine("scale" + suffix, channels, size, gamma="scale")

    s = net.conv("conv1", 3, 64, 7, 224, stride=2, pad=3)  # 112
    normalise("_conv1", 64, s)
    s = out_size(s, 3, 2, ceil=True)  # 56
    cin = 64
    for stage, blocks, width, stride in STAGES:
        for b in range(blocks):
            tag = "%d%s" % (stage, "abcdef"[b])
            st = stride if b == 0 else 1
            if b == 0:
                o = net.conv("res%s_branch1" % tag, cin, 4 * width, 1, s, stride=st, bias=False)
                normalise("%s_branch1" % tag, 4 * width, o)
            o = net.conv("res%s_branch2a" % tag, cin, width, 1, s, stride=st, bias=False)
            normalise("%s_branch2a" % tag, width, o)
            o = net.conv("res%s_branch2b" % tag, width, width, 3, o, pad=1, bias=False)
            normalise("%s_branch2b" % tag, width, o)
            o = net.conv("res%s_branch2c" % tag, width, 4 * width, 1, o, bias=False)
            normalise("%s_branch2c" % tag, 4 * width, o)
            s, cin = o, 4 * width
    net.fc("fc1000", 2048, 1000)
    return net


def resnet50_tf():
    """tf_cnn_benchmarks ResNet-50 v1 (models/resnet_model.py, bottleneck_block_v1): conv0 7/2
    -> 112, max pool 3/2 SAME -> 56; per block a projection shortcut when the depth changes
    (first block of each stage), then 1x1 (with the block's stride), 3x3, 1x1; every conv
    without bias and with batch norm (batch_norm_config scale=True: trainable gamma and beta;
    moving mean and variance are not trainable, so not aggregated); spatial mean, classifier to
    1001. Batch norm is its own layer here (its gradients are ready before its conv's)."""
    net = Net("resnet50", "tf_cnn_benchmarks",
              "tensorflow/benchmarks scripts/tf_cnn_benchmarks/models/resnet_model.py", 224,
              "declared", ["ResNet v1: stride on the first 1x1 and on the projection",
                           "classifier to 1001 classes (benchmark_cnn.py: nclass = num_classes + 1)",
                           "layer names follow tf_cnn_benchmarks' counters (convN, convN/batchnormN)"])
    count = iter(range(53))

    def conv_bn(cin, cout, k, size, stride=1, pad=0):
        n = next(count)
        out = net.conv("conv%d" % n, cin, cout, k, size, stride, pad, bias=False)
        net.affine("conv%d/batchnorm%d" % (n, n), cout, out, gamma="gamma", beta="beta")
        return out

    s = conv_bn(3, 64, 7, 224, stride=2, pad=3)  # 112
    s = out_size(s, 3, 2, ceil=True)  # SAME pooling: 56
    cin = 64
    for _, blocks, width, stride in STAGES:
        for b in range(blocks):
            st = stride if b == 0 else 1
            if cin != 4 * width:
                conv_bn(cin, 4 * width, 1, s, stride=st)
            o = conv_bn(cin, width, 1, s, stride=st)
            o = conv_bn(width, width, 3, o, pad=1)
            o = conv_bn(width, 4 * width, 1, o)
            s, cin = o, 4 * width
    net.fc("affine0", 2048, 1001)
    return net


def resnet50_mxnet():
    """MXNet's ResNet-50 symbol (example/image-classification/symbols/resnet.py, after He et al.'s
    "Identity Mappings", pre-activation): bn_data on the input (fix_gamma=True: gamma's gradient
    is zero but it is still a parameter the kvstore pushes), conv0 7/2 -> 112, bn0, max pool 3/2
    pad 1 -> 56; a unit is bn1, conv1 1x1, bn2, conv2 3x3 (the stride), bn3, conv3 1x1 and, in
    the first unit of a stage, a 1x1 shortcut conv "sc" (on bn1's output, with the stride); a
    final bn1, global pool, fc1. Convs have no bias; every BatchNorm has gamma and beta."""
    net = Net("resnet50", "mxnet", "apache/mxnet example/image-classification/symbols/resnet.py",
              224, "declared", ["pre-activation units (BatchNorm before each conv)",
                                "bn_data's gamma is fixed (zero gradient) but still pushed"])

    def bn(name, channels, size):
        net.affine(name, channels, size, gamma="gamma", beta="beta")

    bn("bn_data", 3, 224)
    s = net.conv("conv0", 3, 64, 7, 224, stride=2, pad=3, bias=False)  # 112
    bn("bn0", 64, s)
    s = out_size(s, 3, 2, pad=1)  # 56
    cin = 64
    for stage, blocks, width, stride in STAGES:
        for b in range(blocks):
            p = "stage%d_unit%d_" % (stage - 1, b + 1)
            st = stride if b == 0 else 1
            bn(p + "bn1", cin, s)
            o = net.conv(p + "conv1", cin, width, 1, s, bias=False)
            bn(p + "bn2", width, o)
            o = net.conv(p + "conv2", width, width, 3, o, stride=st, pad=1, bias=False)
            bn(p + "bn3", width, o)
            o = net.conv(p + "conv3", width, 4 * width, 1, o, bias=False)
            if b == 0:
                net.conv(p + "sc", cin, 4 * width, 1, s, stride=st, bias=False)
            s, cin = o, 4 * width
    bn("bn1", 2048, s)
    net.fc("fc1", 2048, 1000)
    return net


def resnet50_torchvision():
    """torchvision ResNet-50 (v1.5), 224 input: conv1 7/2 -> 112, max pool 3/2 pad 1 -> 56,
    layer1 at 56, layer2 at 28, layer3 at 14, layer4 at 7, adaptive average pool -> 1, fc.
    The stride-2 sits on each first block's conv2 (3x3) and on downsample.0."""
    net = Net("resnet50", "torchvision", "pytorch/vision torchvision/models/resnet.py", 224,
              "reversed", ["Bottleneck with stride on the 3x3 conv (v1.5)"])
    s = net.conv("conv1", 3, 64, 7, 224, stride=2, pad=3, bias=False)  # 112
    net.affine("bn1", 64, s)
    s = out_size(s, 3, 2, pad=1)  # 56
    cin = 64
    for stage, blocks, width, stride in STAGES:
        for b in range(blocks):
            p = "layer%d.%d." % (stage - 1, b)
            st = stride if b == 0 else 1
            o = net.conv(p + "conv1", cin, width, 1, s, bias=False)
            net.affine(p + "bn1", width, o)
            o = net.conv(p + "conv2", width, width, 3, o, stride=st, pad=1, bias=False)
            net.affine(p + "bn2", width, o)
            o = net.conv(p + "conv3", width, 4 * width, 1, o, bias=False)
            net.affine(p + "bn3", 4 * width, o)
            if b == 0:
                d = net.conv(p + "downsample.0", cin, 4 * width, 1, s, stride=st, bias=False)
                net.affine(p + "downsample.1", 4 * width, d)
            s, cin = o, 4 * width
    net.fc("fc", 2048, 1000)
    return net


# --------------------------------------------------------------------------------------- Output

NETS = [alexnet_bvlc, alexnet_torchvision, alexnet_mxnet, alexnet_tf,
        lambda: googlenet_caffe(True), lambda: googlenet_caffe(False),
        lambda: googlenet_torchvision(False), lambda: googlenet_torchvision(True), googlenet_tf,
        googlenet_mxnet, lambda: resnet50_caffe_he(False), lambda: resnet50_caffe_he(True),
        resnet50_torchvision, resnet50_tf, resnet50_mxnet]

ORDER_TEXT = {
    "declared": "layers in reverse definition order; within a layer, blobs in "
                "declaration order (weight, bias / scale, bias)",
    "reversed": "exact reverse of model.parameters() (DDP bucket order), so bias "
                "precedes weight within a layer",
}


def write_table(net, directory):
    rows = list(net.rows())
    elements = sum(math.prod(shape) for _, _, shape, _ in rows)
    flops = sum(f for _, _, _, f in rows)
    expected = EXPECTED[(net.model, net.variant)]
    if (len(rows), elements) != expected:
        sys.exit("%s/%s: got %d tensors, %d elements; expected %d, %d"
                 % (net.model, net.variant, len(rows), elements, *expected))
    lines = [
        "# model: " + net.model,
        "# variant: " + net.variant,
        "# source: " + net.source,
        "# input: %dx%d" % (net.input_size, net.input_size),
    ] + ["# note: " + note for note in net.notes] + [
        "# backward order: " + net.order,
        "# forward_flops: per sample, 2 x multiply-accumulates of the owning layer, on the layer's "
        "weight (gamma, scale) row, 0 on its other rows; bias adds not counted; affine "
        "normalisation layers 2 per output element",
        "# totals: tensors=%d elements=%d bytes_fp32=%d forward_gflops=%.4f"
        % (len(rows), elements, 4 * elements, flops / 1e9),
        "# generated by bench/models/generate.py; do not edit by hand",
        "index,layer,tensor,shape,elements,forward_flops",
    ]
    for i, (layer, tensor, shape, f) in enumerate(rows):
        dims = "x".join(str(d) for d in shape)
        lines.append("%d,%s,%s,%s,%d,%d" % (i, layer, tensor, dims, math.prod(shape), f))
    path = os.path.join(directory, "%s_%s.csv" % (net.model, net.variant))
    with open(path, "w", encoding="ascii") as out:
        out.write("\n".join(lines) + "\n")
    return len(rows), elements, flops


def main():
    directory = os.path.dirname(os.path.abspath(__file__))
    print("%-10s %-17s %8s %12s %9s %7s" % ("model", "variant", "tensors", "elements", "GFLOPs",
                                             "GMACs"))
    for make in NETS:
        net = make()
        tensors, elements, flops = write_table(net, directory)
        print("%-10s %-17s %8d %12d %9.3f %7.3f" % (net.model, net.variant, tensors, elements,
                                                    flops / 1e9, flops / 2e9))


if __name__ == "__main__":
    main()
