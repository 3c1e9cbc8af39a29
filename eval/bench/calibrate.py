"""Measure the two abstention thresholds on dev data and print where the classes separate.

    python -m rag.evaluation.bench calibrate

1. Relevance (``RAG_ANSWER__MIN_RELEVANCE``): the best dense cosine between a question and the
   retrieved chunks, for on-topic questions about the seed abstracts vs. off-topic questions.
2. Support (``RAG_ANSWER__MIN_SUPPORT``): the verifier's support score of claims that the abstracts
   state (paraphrased, not copied) vs. claims they do not (invented authors, wrong numbers,
   general knowledge), each checked against the retrieved sources of its question.

The chosen defaults sit between the classes; the table shows the margins. The evaluation harness
refines them on larger gold sets.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rag import Assistant, Settings, get_settings
from rag.evaluation.bench.suite import Output

ON_TOPIC = [
    "drone footage of zebras in 3D",
    "Can a plain transformer learn rotation invariance from augmented data?",
    "benchmark of AI agents reverse engineering mobile apps",
    "why does in-context learning fail under distribution shift",
    "infinite-width limit of mixture-of-experts routers",
    "why optimizing pass@k hurts pass@1",
    "3D medical image segmentation across hospitals",
    "multi-round image editing drift",
    "when should agents learn from others",
    "blood test for chronic disease from circulating DNA",
    "reducing overconfidence of language models",
    "which step caused an agent system to fail",
    "finding causal parents with additive noise",
    "Who are the authors of WildBox?",
    "How many GPUs were used to train MaskGen?",
]
OFF_TOPIC = [
    "What is the capital of France?",
    "How do I bake sourdough bread?",
    "Who won the 2018 football world cup?",
    "What is the boiling point of water?",
    "Recommend a laptop for gaming",
    "Explain the rules of chess",
    "What is the population of Tokyo?",
    "How do vaccines work?",
    "What's the weather tomorrow?",
    "Translate hello into Spanish",
]
# (question, claim) where the abstracts support the claim, in other words than theirs
SUPPORTED = [
    ("How many annotations does WildBox have?", "WildBox has 237,505 3D box annotations of African savanna animals."),
    ("How does zero-shot 3D detection do on WildBox?", "Zero-shot 3D detection collapses to 0.00 AP on WildBox."),
    ("What does WiREBench contain?", "WiREBench contains 22 protocols and 62 subtasks."),
    (
        "What did WiREBench find in real apps?",
        "Running WiREBench on real applications confirmed 65 protocol vulnerabilities.",
    ),
    ("What is CoCHI?", "CoCHI is a framework that improves LLM calibration by intervening on internal components."),
    ("How many trajectories are in Who&When Pro?", "Who&When Pro has 12,326 failed trajectories with golden labels."),
    (
        "What happens to MoE routers under standard parameterisation?",
        "Under the Standard Parameterisation, router updates freeze after one step.",
    ),
    (
        "What is MaskGen for?",
        "MaskGen is a simple approach for domain generalization in 3D biomedical image segmentation.",
    ),
    ("What does SSL do?", "Selective Social Learning reduces the cost of skill transmission."),
    (
        "What does VAE-LFA do?",
        "VAE-LFA aligns low-frequency statistics in the VAE latent space to reduce drift in multi-turn editing.",
    ),
    ("Where do transformers fail at in-context learning?", "Transformers fail sharply under scale and support shifts."),
    ("What does DLR do?", "DLR converts continuous latent states into discrete tokens."),
]
UNSUPPORTED = [
    ("Who wrote WildBox?", "WildBox was written by John Smith and Maria Garcia."),
    ("How many annotations does WildBox have?", "WildBox has 1.2 million 3D box annotations."),
    ("What GPU trained MaskGen?", "MaskGen was trained on eight NVIDIA A100 GPUs."),
    ("What is the capital of France?", "The capital of France is Paris."),
    ("How many subtasks does WiREBench have?", "WiREBench contains 500 subtasks across 40 protocols."),
    ("Where was CoCHI developed?", "CoCHI was developed at Google DeepMind in London."),
    ("When was Who&When Pro released?", "Who&When Pro was released in March 2024 on GitHub."),
    ("What does SSL stand for?", "SSL is a self-supervised learning method for image classification."),
    ("What accuracy does VAE-LFA reach?", "VAE-LFA reaches 98.7% accuracy on ImageNet."),
    ("What licence does WildBox use?", "WildBox is released under the MIT licence."),
    ("How fast is DLR?", "DLR is ten times faster than chain-of-thought on GSM8K."),
    ("What is MoE?", "Mixture-of-Experts models were invented by Geoffrey Hinton in 1991."),
]

NEEDS_LLM = False


def support_of(settings: Settings, assistant: Assistant, claim: str, question: str) -> float:
    """The verifier's support score of ``claim`` as the answer to ``question`` (best sentence of the claim)."""
    writer = Assistant(settings, embeddings=assistant.embeddings, chat_model=FakeListChatModel(responses=[claim]))
    answer = writer.ask(question)
    return max((s.support for s in answer.sentences), default=0.0)


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--corpus", type=Path, default=None, help="Default: the bundled NeurIPS 2026 abstracts.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=tmp))
        a.ingest([args.corpus or a.bundled_corpus()])
        rel_on = [max((h.dense_score or 0) for h in a.search(q, k=5)) for q in ON_TOPIC]
        rel_off = [max((h.dense_score or 0) for h in a.search(q, k=5)) for q in OFF_TOPIC]
        # Each claim is "written by the model" (a fake that returns it), with both thresholds at 0 so nothing
        # is refused or dropped: the answer then carries the verifier's support score of the claim against
        # the evidence retrieved for its question, exactly as a real answer's sentence would.
        probe = get_settings(data_dir=tmp, answer={"min_relevance": 0.0, "min_support": 0.0})
        sup = [support_of(probe, a, claim, question) for question, claim in SUPPORTED]
        uns = [support_of(probe, a, claim, question) for question, claim in UNSUPPORTED]
    s = a.settings.answer
    print("| measure | class | n | min | max | current threshold |")
    print("|---|---|---|---|---|---|")
    print(f"| relevance | on-topic | {len(rel_on)} | {min(rel_on):.3f} | {max(rel_on):.3f} | {s.min_relevance} |")
    print(f"| relevance | off-topic | {len(rel_off)} | {min(rel_off):.3f} | {max(rel_off):.3f} | |")
    print(f"| support | stated by an abstract | {len(sup)} | {min(sup):.3f} | {max(sup):.3f} | {s.min_support} |")
    print(f"| support | not stated | {len(uns)} | {min(uns):.3f} | {max(uns):.3f} | |")
    print(
        f"\nrelevance gap midpoint {(min(rel_on) + max(rel_off)) / 2:.3f}; "
        f"support gap midpoint {(min(sup) + max(uns)) / 2:.3f}"
    )
    wrong = sum(x < s.min_support for x in sup) + sum(x >= s.min_support for x in uns)
    print(f"claims misclassified at min_support={s.min_support}: {wrong} of {len(sup) + len(uns)}")
    for (_q, c), x in zip(SUPPORTED + UNSUPPORTED, sup + uns):
        print(f"  {x:.3f}  {c}")
    return {
        "relevance_on_topic": [min(rel_on), max(rel_on)],
        "relevance_off_topic": [min(rel_off), max(rel_off)],
        "support_stated": [min(sup), max(sup)],
        "support_not_stated": [min(uns), max(uns)],
        "min_relevance": s.min_relevance,
        "min_support": s.min_support,
        "misclassified_claims": wrong,
    }
