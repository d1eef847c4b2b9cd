"""The post-training calculators' inputs (``rollout``, ``rl_step``): the model as
generation sees it, the generation engines, and a batch of rollouts. inputs.rl builds the
decoding engine from them.
"""

from __future__ import annotations

from calculators.core.spec import Choice, Param, When
from calculators.inputs.hardware import accelerator_choices

MOE = When("model_kind", ("moe",))
MLA = When("attention", ("mla",))
NOT_MLA = When("attention", ("mha", "gqa"))
BYTES = {"bf16": 2.0, "fp8": 1.0}
MAX_ENGINE_GPUS = 4096
_PRECISIONS = (Choice("bf16", "BF16 (2 B)"), Choice("fp8", "FP8 (1 B)"))


def _whole(name: str, label: str, default: int, maximum: int, help_text: str, *,
           when: When | None = None, minimum: int = 1) -> Param:
    return Param(name, label, "int", default, minimum=minimum, maximum=maximum,
                 help=help_text, when=when)


MODEL_PARAMS: tuple[Param, ...] = (
    Param("model_kind", "Model", "choice", "dense",
          choices=(Choice("dense", "dense"), Choice("moe", "mixture of experts")),
          help="A mixture of experts reads only the experts its tokens pick."),
    Param("params", "Active parameters", "float", 70_553_706_496, unit="param",
          minimum=1e6, maximum=1e14,
          help="Parameters one token uses (dense: all). Llama 3 70B: 70.55B; "
               "DeepSeek-V3: 37.55B."),
    Param("total_params", "Total parameters", "float", 235_093_634_560, unit="param",
          optional=True, minimum=1e6, maximum=1e14, placeholder="required", when=MOE,
          help="Every parameter, all experts included: what the weight sync moves and "
               "the engine holds. Qwen3-235B-A22B: 235.1B; DeepSeek-V3: 671.0B."),
    _whole("layers", "Layers", 80, 1000, "Llama 3 70B: 80; DeepSeek-V3: 61."),
    _whole("hidden", "Hidden size", 8192, 1_000_000,
           "The activations' width the engine's GPUs exchange. Llama 3 70B: 8,192."),
    _whole("heads", "Attention heads", 64, 100_000, "Query heads. Llama 3 70B: 64."),
    Param("attention", "Attention", "choice", "gqa",
          choices=(Choice("mha", "multi-head (MHA)"), Choice("gqa", "grouped-query (GQA)"),
                   Choice("mla", "multi-head latent (MLA)")),
          help="What the KV cache keeps per token and layer: 2 x KV heads x head size "
               "(MHA, GQA), or a latent plus a rotary key (MLA); DeepSeek-V2, Table 1."),
    _whole("kv_heads", "KV heads", 8, 100_000, "= heads for MHA. Llama 3 70B: 8.",
           when=NOT_MLA),
    _whole("head_dim", "Head size", 128, 100_000, "Llama 3 70B: 128.", when=NOT_MLA),
    _whole("kv_lora_rank", "MLA latent (d_c)", 512, 100_000, "DeepSeek-V3: 512.",
           when=MLA),
    _whole("qk_rope_head_dim", "MLA rotary key (d_h^R)", 64, 100_000, "DeepSeek-V3: 64.",
           when=MLA),
    _whole("routed_experts", "Routed experts", 128, 100_000,
           "Qwen3-235B-A22B: 128; DeepSeek-V3: 256.",
           when=MOE, minimum=2),
    _whole("experts_per_token", "Experts per token", 8, 1000, "DeepSeek-V3: 8.", when=MOE),
    _whole("dense_layers", "Dense layers (no experts)", 0, 1000,
           "Layers with a dense MLP instead of experts. Qwen3-235B-A22B: none; "
           "DeepSeek-V3: the first 3.",
           when=MOE, minimum=0),
)

GENERATOR_PARAMS: tuple[Param, ...] = (
    Param("gpu", "GPU", "choice", "h100_sxm", choices=accelerator_choices(),
          help="Memory, HBM bandwidth, peaks and links from the catalogue; the kernel "
               "rates from the speed model (catalogues.kernel_speeds)."),
    Param("engine_gpus", "GPUs per generation engine", "int", None, optional=True,
          minimum=1, maximum=MAX_ENGINE_GPUS, placeholder="the fastest that fits",
          help="GPUs holding one copy of the model for generation (vLLM's tensor-parallel "
               "size; DeepSeek's decode units: 144). Fewer GPUs per engine means more "
               "engines, but less memory left for the KV cache in each. Blank: the size "
               "with the most tokens/s per GPU at a full batch, among those that hold the "
               "model and divide the GPUs."),
    Param("attention_parallel", "Attention across the engine", "choice", "tp",
          choices=(Choice("tp", "tensor-parallel (heads split)"),
                   Choice("dp", "data-parallel (each GPU its own sequences)")),
          when=MOE,
          help="Experts are spread over all the engine's GPUs either way. Data-parallel "
               "attention keeps MLA's latent cache undivided per sequence (DeepSeek's "
               "serving layout); tensor-parallel splits the attention weights."),
    Param("weight_precision", "Weights in generation", "choice", "bf16",
          choices=_PRECISIONS, help="FP8 halves the bytes every decoding step reads."),
    Param("kv_precision", "KV cache", "choice", "bf16", choices=_PRECISIONS,
          help="FP8 KV cache doubles the tokens memory holds (vLLM --kv-cache-dtype fp8)."),
    Param("memory_utilization", "GPU memory for weights and KV cache", "float", 0.9,
          unit="1", minimum=0.1, maximum=1.0,
          help="vLLM's gpu_memory_utilization (default 0.9); the rest is headroom."),
    _whole("max_sequences", "Most sequences per scheduler", 256, 10_000_000,
           "The cap on sequences decoded together (vLLM max_num_seqs; 256 is our "
           "assumption, a common setting): per engine, or per GPU with data-parallel "
           "attention (one scheduler per rank); memory may cap it lower."),
    Param("overlap_communication", "Overlap communication with compute", "bool", False,
          help="Two micro-batches in flight hide the allreduces and the expert "
               "dispatch behind the other's compute (DeepSeek's two-batch overlap); "
               "off: they add to each step."),
)

WORKLOAD_PARAMS: tuple[Param, ...] = (
    _whole("prompts", "Prompts per step", 512, 10_000_000,
           "DAPO and AReaL: 512 prompts per step (DAPO, arXiv 2503.14476, Sec. 4.1)."),
    _whole("samples_per_prompt", "Responses per prompt", 16, 4096,
           "GRPO's group: 16 in DeepSeek-R1-Zero and DAPO, 64 in DeepSeekMath."),
    _whole("prompt_tokens", "Prompt length", 1024, 10_000_000,
           "Tokens; each prompt is prefilled once and its responses share it (prefix "
           "caching)."),
    Param("mean_response", "Mean response length", "float", 4096, unit="token",
          minimum=1, maximum=10_000_000,
          help="NeMo-RL's Qwen3-235B run: 5,698 of at most 8,192; DeepSeek-V3: 701 of "
               "1,536."),
    _whole("max_response", "Longest response (cap)", 16384, 10_000_000,
           "The generation cap. DAPO: 20,480; DeepSeek-R1-Zero: 32,768 then 65,536."),
)
