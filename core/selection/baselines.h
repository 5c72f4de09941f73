#pragma once
// The ONE place where WaveLab maps layer-id conventions (everything else uses HF indices).
//
// WaveLab index h = Hugging Face hidden_states[h]: 0 = embeddings, h = output of decoder
// layer h-1 = input of decoder layer h, N = last layer output (pre-final-norm).
//
// EAGLE3 default [2, N//2, N-3]: the reference EAGLE3 code, SGLang's default
// (layers_to_capture when no ids are configured) and vLLM's default all append the
// residual stream *before* calling decoder layer i for i in {2, N//2, N-3}, i.e. the INPUT
// of those layers = HF hidden_states[2], [N//2], [N-3]. (SGLang/SpecForge *configured* ids
// are layer-output ids, k -> hidden_states[k+1]; the default is applied pre-layer. So the
// default equals SGLang configured ids [1, N//2-1, N-4].)
// EAGLE2 [N-1]: the feature of the top decoder layer N-1, i.e. its output = HF
// hidden_states[N] (EAGLE-1/2 read the final hidden state; WaveLab scores the pre-final-norm
// state, the per-token RMSNorm being outside the matrix-entropy comparison).
#include <string>
#include <vector>

namespace wl {

// num_decoder_layers = N (num_states - 1). Duplicates are removed (small N), indices clamped
// to [0, N]; `warnings` receives a line when that happens.
std::vector<int> eagle3DefaultStates(int num_decoder_layers, std::vector<std::string>* warnings = nullptr);
std::vector<int> eagle2DefaultStates(int num_decoder_layers);

// Framework id <-> HF hidden-state index.
// "input"  convention (vLLM eagle_aux_hidden_state_layer_ids): id k = input of layer k = h k.
// "output" convention (SGLang/SpecForge/...):                   id k = output of layer k = h k+1.
inline int hfStateFromInputId(int id) { return id; }
inline int inputIdFromHfState(int h) { return h; }
inline int hfStateFromOutputId(int id) { return id + 1; }
inline int outputIdFromHfState(int h) { return h - 1; }

}  // namespace wl
