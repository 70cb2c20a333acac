# SPDX-License-Identifier: MIT
"""Seed 000's TFLite headings -> the TFLite BuiltinOperator names the importer gives IR nodes
(public enum spelling, tensorflow/tensorflow tensorflow/lite/schema/schema.fbs). Used by
gen_mslite.py so that a CONV_2D node of a .tflite file matches the seed's "TFLite Conv2D" entry."""

BUILTIN = {
    "Conv2D": "CONV_2D", "Conv3D": "CONV_3D", "MaxPool2D": "MAX_POOL_2D", "FullyConnected": "FULLY_CONNECTED",
    "BatchMatmul": "BATCH_MATMUL", "Softmax": "SOFTMAX", "Relu": "RELU", "Tanh": "TANH",
    "Logistic (Sigmoid)": "LOGISTIC", "Reshape": "RESHAPE", "Mul": "MUL", "Add": "ADD", "Sub": "SUB",
    "Gather": "GATHER", "Split": "SPLIT", "SplitV": "SPLIT_V", "Concatenation": "CONCATENATION",
    "AveragePool2D": "AVERAGE_POOL_2D", "Tile": "TILE", "Pad": "PAD", "PadV2": "PADV2", "Mirror_Pad": "MIRROR_PAD",
    "Resize_Bilinear": "RESIZE_BILINEAR", "Resize_Nearest_Neighbor": "RESIZE_NEAREST_NEIGHBOR",
    "Squeeze": "SQUEEZE", "ExpandDims": "EXPAND_DIMS", "Abs": "ABS", "Ceil": "CEIL", "Cos": "COS", "Exp": "EXP",
    "Floor": "FLOOR", "Log": "LOG", "Round": "ROUND", "Rsqrt": "RSQRT", "Sin": "SIN", "Sqrt": "SQRT",
    "Square": "SQUARE", "L2Normalization": "L2_NORMALIZATION", "Slice": "SLICE", "StridedSlice": "STRIDED_SLICE",
    "DepthwiseConv2D": "DEPTHWISE_CONV_2D", "Transpose": "TRANSPOSE", "ArgMax": "ARG_MAX", "ArgMin": "ARG_MIN",
    "Div": "DIV", "ReduceMax": "REDUCE_MAX", "ReduceMin": "REDUCE_MIN", "Sum": "SUM", "Mean": "MEAN",
    "Cast": "CAST", "Quantize": "QUANTIZE", "Dequantize": "DEQUANTIZE", "PRelu": "PRELU", "CumSum": "CUMSUM",
    "ReverseSequence": "REVERSE_SEQUENCE", "Relu6": "RELU6", "LeakyRelu": "LEAKY_RELU", "HardSwish": "HARD_SWISH",
    "LogicalAnd": "LOGICAL_AND", "Equal": "EQUAL", "GreaterEqual": "GREATER_EQUAL", "Greater": "GREATER",
    "LessEqual": "LESS_EQUAL", "Less": "LESS", "NotEqual": "NOT_EQUAL", "LogicalNot": "LOGICAL_NOT",
    "LogicalOr": "LOGICAL_OR", "Elu": "ELU", "DepthToSpace": "DEPTH_TO_SPACE", "SpaceToDepth": "SPACE_TO_DEPTH",
    "Fill": "FILL", "Shape": "SHAPE", "Neg": "NEG", "Pow": "POW", "TopK": "TOPK_V2", "Gelu": "GELU", "Pack": "PACK",
    "Unpack": "UNPACK", "Select": "SELECT", "SelectV2": "SELECT_V2", "ReverseV2": "REVERSE_V2",
    "Maximum": "MAXIMUM", "Minimum": "MINIMUM", "ReduceProd": "REDUCE_PROD", "OneHot": "ONE_HOT",
    "Unique": "UNIQUE", "GatherNd": "GATHER_ND", "ScatterND": "SCATTER_ND", "LogSoftmax": "LOG_SOFTMAX",
    "TransposeConv": "TRANSPOSE_CONV",
}
