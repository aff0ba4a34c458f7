// The names of the kinds of inference warnings, as the Python binding and the docs spell them.
#include "hookscope/shapes.hpp"

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

std::string_view kind_name(inference_warning::kind kind) noexcept {
  using k = inference_warning::kind;
  switch (kind) {
    case k::unknown_input: return "unknown_input";
    case k::label_given_twice: return "label_given_twice";
    case k::label_names_no_dim: return "label_names_no_dim";
    case k::well_known_name_not_taken: return "well_known_name_not_taken";
    case k::label_joins_differing_dims: return "label_joins_differing_dims";
    case k::dims_untracked: return "dims_untracked";
    case k::dim_seen_below_two: return "dim_seen_below_two";
    case k::distinct_values_truncated: return "distinct_values_truncated";
    case k::shapes_seen_truncated: return "shapes_seen_truncated";
    case k::batch_dimension_unobserved: return "batch_dimension_unobserved";
    case k::combinations_truncated: return "combinations_truncated";
    case k::dtype_changed: return "dtype_changed";
    case k::relation_not_listed: return "relation_not_listed";
    case k::relation_outside_profile: return "relation_outside_profile";
    case k::specialization_not_avoided: return "specialization_not_avoided";
    case k::export_dim_below_one: return "export_dim_below_one";
  }
  return "unknown";
}

HOOKSCOPE_DETAIL_END_NAMESPACE
