"""Dense models released 2023-2025, one per family the config.json import maps
(calculators.inputs.hf_families), each as a preset: its shape as its config.json gives
it, its parameter count as its checkpoint holds it, and what its report says of its
training. Tests read each family's released config.json (retyped, with sources, in
tests/fixtures/hf_configs) through the import and check it fills these same values."""

from __future__ import annotations

from calculators.catalogues.preset_base import PLAIN_DENSE, Preset, PresetValue


def dense_shape(*, layers: int, hidden: int, heads: int, kv_heads: int, head_dim: int,
                ffn: int, vocab: int, seq_len: int, tied: bool = False,
                **extra: PresetValue) -> dict[str, PresetValue]:
    """A Llama-style dense model (SwiGLU, RMSNorm without biases, RoPE, untied unless
    ``tied``), every architecture input set; ``extra`` sets the others (a window, QK-Norm)."""
    return {"model_kind": "dense", "layers": layers, "hidden": hidden, "heads": heads,
            "kv_heads": kv_heads, "head_dim": head_dim, "ffn_hidden": ffn, "vocab": vocab,
            "seq_len": seq_len, "gated_mlp": True, "biases": False,
            "position_embedding": "rotary", "tied_embeddings": tied, **PLAIN_DENSE, **extra}


_HUB = ("; parameter count: the Hugging Face Hub's safetensors total for the release "
        "(recorded in debaditc/kvfit, src/kvfit/data/models.json)")

RELEASED_DENSE: tuple[Preset, ...] = (
    Preset("mistral_7b", "Mistral 7B (sliding window)", "model", {
        **dense_shape(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336,
                 vocab=32000, seq_len=8192, layer_pattern="S", attention_window=4096),
        "params": 7_241_732_096},
        "mistralai/Mistral-7B-v0.1 config.json (sliding_window 4096 on every layer); Jiang "
        "et al. 2023, Mistral 7B, Table 1 (context 8,192, window 4,096)" + _HUB),
    Preset("qwen2_5_7b", "Qwen2.5 7B", "model", {
        **dense_shape(layers=28, hidden=3584, heads=28, kv_heads=4, head_dim=128, ffn=18944,
                 vocab=152064, seq_len=4096, qkv_bias=True),
        "params": 7_615_616_512, "tokens": 18e12},
        "Qwen/Qwen2.5-7B config.json (biases on Q, K, V: Qwen2's modelling code); Qwen Team "
        "2024, Qwen2.5 Technical Report, Sec. 3 (18T tokens; 4,096-token sequences before "
        "the long-context stage)" + _HUB),
    Preset("qwen3_8b", "Qwen3 8B", "model", {
        **dense_shape(layers=36, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=12288,
                 vocab=151936, seq_len=4096, qk_norm=True),
        "params": 8_190_735_360, "tokens": 36e12},
        "Qwen/Qwen3-8B config.json; Yang et al. 2025, Qwen3 Technical Report, Sec. 3 (36T "
        "tokens; general stage with 4,096-token sequences)" + _HUB),
    Preset("gemma2_9b", "Gemma 2 9B (alternating windows)", "model", {
        **dense_shape(layers=42, hidden=3584, heads=16, kv_heads=8, head_dim=256, ffn=14336,
                 vocab=256000, seq_len=8192, tied=True, norms_per_layer=4,
                 layer_pattern="SF", attention_window=4096),
        "params": 9_241_705_984, "tokens": 8e12},
        "google/gemma-2-9b config.json (sliding_window 4096 on every other layer, from the "
        "first); Gemma Team 2024, Gemma 2 report, Tables 1-2 (8K context, 8T tokens, four "
        "norms per layer: Sec. 2)" + _HUB),
    Preset("gemma3_27b", "Gemma 3 27B (5 local : 1 global)", "model", {
        **dense_shape(layers=62, hidden=5376, heads=32, kv_heads=16, head_dim=128, ffn=21504,
                 vocab=262208, seq_len=32768, tied=True, norms_per_layer=4, qk_norm=True,
                 layer_pattern="5S1F", attention_window=1024),
        "params": 27_009_346_304, "tokens": 14e12},
        "google/gemma-3-27b config.json (text_config: sliding_window 1024, "
        "sliding_window_pattern 6; vocabulary 262,208, Gemma3TextConfig's default); Gemma "
        "Team 2025, Gemma 3 report, Table 1 (non-embedding 25,600M) and Sec. 2 (5:1 local "
        "to global, 1,024-token windows, 32K-token pre-training sequences, 14T tokens). "
        "27,009,346,304 is the language model: the Hub's 27,432,406,640 less the SigLIP "
        "vision tower (416,866,032) and its projector (6,194,304)"),
)
