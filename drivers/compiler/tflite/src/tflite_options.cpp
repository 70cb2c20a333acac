// SPDX-License-Identifier: MIT
// TFLite builtin options -> num::Attributes, keeping the TFLite field names (snake_case) so the
// checker can cite them as seed 000 does (e.g. fused_activation_function in {NONE, RELU}).
#include "tflite_internal.h"

namespace drv::importer::tfl {

namespace {

const char* padding_name(Padding p) { return p == Padding::VALID ? "VALID" : "SAME"; }

const char* activation_name(ActivationFunctionType a) {
    switch (a) {
        case ActivationFunctionType::NONE: return "NONE";
        case ActivationFunctionType::RELU: return "RELU";
        case ActivationFunctionType::RELU_N1_TO_1: return "RELU_N1_TO_1";
        case ActivationFunctionType::RELU6: return "RELU6";
        case ActivationFunctionType::TANH: return "TANH";
        case ActivationFunctionType::SIGN_BIT: return "SIGN_BIT";
    }
    return "UNKNOWN";
}

void act(num::Attributes& a, ActivationFunctionType f) { a.set("fused_activation_function", std::string(activation_name(f))); }
void i(num::Attributes& a, const char* n, int64_t v) { a.set(n, v); }
void ints(num::Attributes& a, const char* n, const flatbuffers::Vector<int32_t>* v) {
    std::vector<int64_t> out;
    if (v) out.assign(v->begin(), v->end());
    a.set(n, out);
}

void conv_like(num::Attributes& a, Padding p, int sw, int sh, ActivationFunctionType f) {
    a.set("padding", std::string(padding_name(p)));
    i(a, "stride_w", sw);
    i(a, "stride_h", sh);
    act(a, f);
}

}  // namespace

void decode_options(const Operator& op, num::Attributes& a) {
    if (!op.builtin_options()) return;  // type set without a table: treated as defaults
    switch (op.builtin_options_type()) {
        case BuiltinOptions::Conv2DOptions: {
            auto* o = op.builtin_options_as_Conv2DOptions();
            conv_like(a, o->padding(), o->stride_w(), o->stride_h(), o->fused_activation_function());
            i(a, "dilation_w_factor", o->dilation_w_factor());
            i(a, "dilation_h_factor", o->dilation_h_factor());
            break;
        }
        case BuiltinOptions::DepthwiseConv2DOptions: {
            auto* o = op.builtin_options_as_DepthwiseConv2DOptions();
            conv_like(a, o->padding(), o->stride_w(), o->stride_h(), o->fused_activation_function());
            i(a, "depth_multiplier", o->depth_multiplier());
            i(a, "dilation_w_factor", o->dilation_w_factor());
            i(a, "dilation_h_factor", o->dilation_h_factor());
            break;
        }
        case BuiltinOptions::Pool2DOptions: {
            auto* o = op.builtin_options_as_Pool2DOptions();
            conv_like(a, o->padding(), o->stride_w(), o->stride_h(), o->fused_activation_function());
            i(a, "filter_width", o->filter_width());
            i(a, "filter_height", o->filter_height());
            break;
        }
        case BuiltinOptions::Conv3DOptions: {
            auto* o = op.builtin_options_as_Conv3DOptions();
            conv_like(a, o->padding(), o->stride_w(), o->stride_h(), o->fused_activation_function());
            i(a, "stride_d", o->stride_d());
            i(a, "dilation_d_factor", o->dilation_d_factor());
            i(a, "dilation_w_factor", o->dilation_w_factor());
            i(a, "dilation_h_factor", o->dilation_h_factor());
            break;
        }
        case BuiltinOptions::TransposeConvOptions: {
            auto* o = op.builtin_options_as_TransposeConvOptions();
            conv_like(a, o->padding(), o->stride_w(), o->stride_h(), o->fused_activation_function());
            break;
        }
        case BuiltinOptions::FullyConnectedOptions: {
            auto* o = op.builtin_options_as_FullyConnectedOptions();
            act(a, o->fused_activation_function());
            // FullyConnectedOptionsWeightsFormat by its public name (seed 000: "weights_format == DEFAULT only").
            a.set("weights_format", std::string(o->weights_format() == 0 ? "DEFAULT" : o->weights_format() == 1 ? "SHUFFLED4x16INT8" : "UNKNOWN"));
            i(a, "keep_num_dims", o->keep_num_dims());
            break;
        }
        case BuiltinOptions::SoftmaxOptions: a.set("beta", op.builtin_options_as_SoftmaxOptions()->beta()); break;
        case BuiltinOptions::ConcatenationOptions: {
            auto* o = op.builtin_options_as_ConcatenationOptions();
            i(a, "axis", o->axis());
            act(a, o->fused_activation_function());
            break;
        }
        case BuiltinOptions::AddOptions: act(a, op.builtin_options_as_AddOptions()->fused_activation_function()); break;
        case BuiltinOptions::SubOptions: act(a, op.builtin_options_as_SubOptions()->fused_activation_function()); break;
        case BuiltinOptions::MulOptions: act(a, op.builtin_options_as_MulOptions()->fused_activation_function()); break;
        case BuiltinOptions::DivOptions: act(a, op.builtin_options_as_DivOptions()->fused_activation_function()); break;
        case BuiltinOptions::L2NormOptions: act(a, op.builtin_options_as_L2NormOptions()->fused_activation_function()); break;
        case BuiltinOptions::ResizeBilinearOptions: {
            auto* o = op.builtin_options_as_ResizeBilinearOptions();
            i(a, "align_corners", o->align_corners());
            i(a, "half_pixel_centers", o->half_pixel_centers());
            break;
        }
        case BuiltinOptions::ResizeNearestNeighborOptions: {
            auto* o = op.builtin_options_as_ResizeNearestNeighborOptions();
            i(a, "align_corners", o->align_corners());
            i(a, "half_pixel_centers", o->half_pixel_centers());
            break;
        }
        case BuiltinOptions::ReshapeOptions: ints(a, "new_shape", op.builtin_options_as_ReshapeOptions()->new_shape()); break;
        case BuiltinOptions::SpaceToDepthOptions: i(a, "block_size", op.builtin_options_as_SpaceToDepthOptions()->block_size()); break;
        case BuiltinOptions::DepthToSpaceOptions: i(a, "block_size", op.builtin_options_as_DepthToSpaceOptions()->block_size()); break;
        case BuiltinOptions::GatherOptions: {
            auto* o = op.builtin_options_as_GatherOptions();
            i(a, "axis", o->axis());
            i(a, "batch_dims", o->batch_dims());
            break;
        }
        case BuiltinOptions::ReducerOptions: i(a, "keep_dims", op.builtin_options_as_ReducerOptions()->keep_dims()); break;
        case BuiltinOptions::SqueezeOptions: ints(a, "squeeze_dims", op.builtin_options_as_SqueezeOptions()->squeeze_dims()); break;
        case BuiltinOptions::StridedSliceOptions: {
            auto* o = op.builtin_options_as_StridedSliceOptions();
            i(a, "begin_mask", o->begin_mask());
            i(a, "end_mask", o->end_mask());
            i(a, "ellipsis_mask", o->ellipsis_mask());
            i(a, "new_axis_mask", o->new_axis_mask());
            i(a, "shrink_axis_mask", o->shrink_axis_mask());
            i(a, "offset", o->offset());
            break;
        }
        case BuiltinOptions::SplitOptions: i(a, "num_splits", op.builtin_options_as_SplitOptions()->num_splits()); break;
        case BuiltinOptions::SplitVOptions: i(a, "num_splits", op.builtin_options_as_SplitVOptions()->num_splits()); break;
        case BuiltinOptions::CastOptions: {
            auto* o = op.builtin_options_as_CastOptions();
            i(a, "in_data_type", static_cast<int>(o->in_data_type()));
            i(a, "out_data_type", static_cast<int>(o->out_data_type()));
            break;
        }
        case BuiltinOptions::ArgMaxOptions: i(a, "output_type", static_cast<int>(op.builtin_options_as_ArgMaxOptions()->output_type())); break;
        case BuiltinOptions::ArgMinOptions: i(a, "output_type", static_cast<int>(op.builtin_options_as_ArgMinOptions()->output_type())); break;
        case BuiltinOptions::ShapeOptions: i(a, "out_type", static_cast<int>(op.builtin_options_as_ShapeOptions()->out_type())); break;
        case BuiltinOptions::PackOptions: {
            auto* o = op.builtin_options_as_PackOptions();
            i(a, "values_count", o->values_count());
            i(a, "axis", o->axis());
            break;
        }
        case BuiltinOptions::UnpackOptions: {
            auto* o = op.builtin_options_as_UnpackOptions();
            i(a, "num", o->num());
            i(a, "axis", o->axis());
            break;
        }
        case BuiltinOptions::OneHotOptions: i(a, "axis", op.builtin_options_as_OneHotOptions()->axis()); break;
        case BuiltinOptions::LeakyReluOptions: a.set("alpha", op.builtin_options_as_LeakyReluOptions()->alpha()); break;
        case BuiltinOptions::MirrorPadOptions:
            a.set("mode", std::string(op.builtin_options_as_MirrorPadOptions()->mode() == MirrorPadMode::SYMMETRIC ? "SYMMETRIC" : "REFLECT"));
            break;
        case BuiltinOptions::UniqueOptions: i(a, "idx_out_type", static_cast<int>(op.builtin_options_as_UniqueOptions()->idx_out_type())); break;
        case BuiltinOptions::ReverseSequenceOptions: {
            auto* o = op.builtin_options_as_ReverseSequenceOptions();
            i(a, "seq_dim", o->seq_dim());
            i(a, "batch_dim", o->batch_dim());
            break;
        }
        case BuiltinOptions::BatchMatMulOptions: {
            auto* o = op.builtin_options_as_BatchMatMulOptions();
            i(a, "adj_x", o->adj_x());
            i(a, "adj_y", o->adj_y());
            break;
        }
        case BuiltinOptions::CumsumOptions: {
            auto* o = op.builtin_options_as_CumsumOptions();
            i(a, "exclusive", o->exclusive());
            i(a, "reverse", o->reverse());
            break;
        }
        case BuiltinOptions::GeluOptions: i(a, "approximate", op.builtin_options_as_GeluOptions()->approximate()); break;
        default: break;  // no options, or a type this schema does not read (verified, ignored)
    }
}

}  // namespace drv::importer::tfl
