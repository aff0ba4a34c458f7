// The well-known input names of Hugging Face LLMs, the default of dynamic_shapes_options::known_dim_names (rule C3,
// docs/input_observer_rules.md). The engine itself knows no input name: it reads this table from the options.
#include "hookscope/shapes.hpp"

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

std::vector<known_dim_name> default_known_dim_names() {
  return {
      {"input_ids", 0, "batch_size"},
      {"input_ids", 1, "sequence_length"},
      {"position_ids", 0, "batch_size"},
      {"position_ids", 1, "sequence_length"},
      {"token_type_ids", 0, "batch_size"},
      {"token_type_ids", 1, "sequence_length"},
      {"attention_mask", 0, "batch_size"},
      {"attention_mask", 1, "total_sequence_length"},
      {"past_key_values", 0, "batch_size"},
      {"past_key_values", 2, "past_sequence_length"},
      {"cache", 0, "batch_size"},  // transformers 5 names the cache argument of its decoders `cache`
      {"cache", 2, "past_sequence_length"},
      {"cache_position", 0, "sequence_length"},
      {"pixel_values", 0, "batch_size"},
      {"decoder_input_ids", 0, "batch_size"},
      {"decoder_input_ids", 1, "decoder_sequence_length"},
      {"decoder_attention_mask", 0, "batch_size"},
      {"decoder_attention_mask", 1, "decoder_sequence_length"},
  };
}

HOOKSCOPE_DETAIL_END_NAMESPACE
