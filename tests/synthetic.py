"""Seeded generator of realistic-looking conference abstracts, for tests that need thousands of papers.

The real collection the benchmarks use (``ml_abstracts``, scraped conference pages) has no licence,
so it is neither shipped nor required by the tests. This module writes records of the same shape
(``id, venue, year, title, abstract, status, track`` plus ``primary_area``, as OpenReview venues
have) with what the tests rely on:

* a skewed venue distribution, like a slice of real conference data: two big venues (~50 % and
  ~40 % of papers), ten mid-sized ones (~0.9 % each) and four rare ones (~0.25 % each). Filtered
  search decides by a venue's share of chunks whether to over-fetch or let Chroma filter (~8 %);
* text built from per-area vocabularies (tasks, methods, datasets, metrics, findings), each venue
  drawing its areas from its own profile (CVPR mostly vision, ICRA robotics, COLT theory), so a
  query such as "robot grasping with tactile sensing" has genuinely relevant papers and far ones;
* real-data lengths: 60-310 words (mean ~160; the real first 5,000: 165), ~37 % of them longer than
  one 220-token chunk (real: 35 %); titles of ~8 words, 80 % naming a coined method
  ("KoriGrasp: ..."), all distinct.

Deterministic for a seed, and each paper consumes the random stream in turn, so ``make_abstracts(3000)``
is the first 3,000 of ``make_abstracts(5000)``. 5,000 abstracts take ~0.2 s.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def _v(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(";") if s.strip())


@dataclass(frozen=True)
class Area:
    """The vocabulary of one research area. ``findings`` may use {name}, {data} and {metric}."""

    field: str
    tasks: tuple[str, ...]
    methods: tuple[str, ...]
    parts: tuple[str, ...]  # building blocks of coined method names
    objects: tuple[str, ...]
    challenges: tuple[str, ...]
    data: tuple[str, ...]
    metrics: tuple[str, ...]
    findings: tuple[str, ...]
    theory: bool = False


AREAS: dict[str, Area] = {
    "robotic manipulation": Area(
        field="robotics",
        tasks=_v(
            "robot grasping; dexterous in-hand manipulation; grasping of transparent objects; contact-rich "
            "manipulation; bimanual manipulation; robotic grasp planning; tactile object recognition; "
            "peg-in-hole insertion; cloth manipulation"
        ),
        methods=_v(
            "tactile-conditioned grasp policy; visuo-tactile transformer; grasp quality network; diffusion "
            "policy for manipulation; contact-aware imitation learning; force-feedback controller; "
            "slip-aware regrasping policy"
        ),
        parts=_v("Grasp; Tact; Touch; Dex; Grip; Haptic; Slip; Palm"),
        objects=_v(
            "tactile sensing; contact forces; fingertip tactile sensors; gripper poses; object slip; GelSight "
            "images; robot arm trajectories; grasp candidates"
        ),
        challenges=_v(
            "occlusion by the gripper; unknown object friction; sensor noise; the sim-to-real gap; deformable "
            "objects; sparse contact signals"
        ),
        data=_v(
            "a Franka Panda arm; the YCB object set; a UR5 robot with a two-finger gripper; 120 household "
            "objects; the Allegro hand; simulated and real grasping trials"
        ),
        metrics=_v("grasp success rate; insertion success rate; slip detection accuracy; task completion rate"),
        findings=_v(
            "Tactile sensing lets the robot detect slip before the object falls and adjust its grip force.; "
            "Combining vision with touch raises the grasp success rate on unseen objects.; "
            "{name} transfers from simulation to a real robot without fine-tuning.; "
            "Real-robot experiments with {data} confirm that touch matters most when vision is occluded."
        ),
    ),
    "robot navigation and locomotion": Area(
        field="robotics",
        tasks=_v(
            "legged locomotion; visual navigation; robot navigation in crowds; quadruped locomotion over rough "
            "terrain; mobile robot exploration; autonomous drone racing; motion planning"
        ),
        methods=_v(
            "sim-to-real locomotion policy; model predictive controller; learned motion planner; occupancy "
            "map predictor; teacher-student locomotion policy"
        ),
        parts=_v("Nav; Loco; Quad; Walk; Plan; Terrain; Drone"),
        objects=_v(
            "proprioceptive signals; depth images; occupancy maps; terrain elevation maps; LiDAR scans; joint torques"
        ),
        challenges=_v("uneven terrain; dynamic obstacles; partial observability; the sim-to-real gap"),
        data=_v("a Unitree quadruped; the Habitat simulator; real outdoor trails; the Gibson environments"),
        metrics=_v("success weighted by path length; collision rate; traversal speed; goal reaching rate"),
        findings=_v(
            "The quadruped walks over stairs and gravel it never saw in simulation.; "
            "{name} halves the collision rate in crowded corridors.; "
            "Proprioception alone suffices on most terrain, and vision helps only on stairs."
        ),
    ),
    "bandits and online learning": Area(
        field="online learning",
        tasks=_v(
            "multi-armed bandits; contextual bandits; linear bandits; online convex optimization; best-arm "
            "identification; combinatorial bandits; adversarial bandits; dueling bandits"
        ),
        methods=_v(
            "upper confidence bound algorithm; Thompson sampling variant; optimistic exploration strategy; "
            "elimination algorithm; online mirror descent method"
        ),
        parts=_v("UCB; Thompson; Arm; Regret; Bandit; Explore"),
        objects=_v(
            "regret bounds; the number of arms; reward distributions; confidence sets; exploration and "
            "exploitation; the time horizon"
        ),
        challenges=_v(
            "heavy-tailed rewards; non-stationary rewards; delayed feedback; a large number of arms; "
            "adversarial corruption"
        ),
        data=_v("synthetic bandit instances; the Yahoo! news recommendation data; simulated ad auctions"),
        metrics=_v("cumulative regret; sample complexity; simple regret"),
        findings=_v(
            r"We prove that {name} achieves a regret bound of $O(\sqrt{{dT \log T}})$ in the contextual bandit "
            "setting.; "
            "A matching lower bound shows that this regret is minimax optimal up to logarithmic factors.; "
            "The regret bound holds against an adaptive adversary and does not depend on the number of arms.; "
            "Experiments confirm that {name} incurs lower cumulative regret than UCB and Thompson sampling."
        ),
        theory=True,
    ),
    "reinforcement learning": Area(
        field="reinforcement learning",
        tasks=_v(
            "offline reinforcement learning; policy optimization; model-based reinforcement learning; reward "
            "shaping; multi-agent reinforcement learning; exploration in sparse-reward environments"
        ),
        methods=_v(
            "conservative Q-learning variant; actor-critic algorithm; world model; policy gradient method; "
            "value-based agent"
        ),
        parts=_v("Q; Policy; Critic; Dreamer; Reward; Agent"),
        objects=_v("value functions; Q-values; replay buffers; reward signals; behaviour policies; rollouts"),
        challenges=_v("distribution shift; overestimation bias; sparse rewards; sample inefficiency"),
        data=_v("the D4RL benchmark; Atari games; the MuJoCo locomotion tasks; the DeepMind Control Suite"),
        metrics=_v("normalized return; sample efficiency; episodic return"),
        findings=_v(
            "{name} avoids overestimating the value of actions absent from the dataset.; "
            "On {data}, {name} matches online agents with ten times fewer environment steps."
        ),
    ),
    "semantic segmentation": Area(
        field="computer vision",
        tasks=_v(
            "semantic segmentation; panoptic segmentation; open-vocabulary semantic segmentation; "
            "weakly supervised semantic segmentation; instance segmentation; video object segmentation; "
            "domain-adaptive semantic segmentation"
        ),
        methods=_v(
            "segmentation transformer; mask classification model; pixel-level contrastive learning; "
            "pseudo-label refinement scheme; boundary-aware decoder"
        ),
        parts=_v("Seg; Mask; Pixel; Panoptic; Region"),
        objects=_v("pixel-wise labels; segmentation masks; class boundaries; dense predictions; scene layouts"),
        challenges=_v("costly pixel-level annotation; class imbalance; thin structures; domain shift"),
        data=_v("Cityscapes; ADE20K; PASCAL VOC; COCO-Stuff; the GTA5 to Cityscapes benchmark"),
        metrics=_v("mean intersection over union (mIoU); panoptic quality; boundary F-score"),
        findings=_v(
            "{name} segments thin structures such as poles and fences that prior segmentation models miss.; "
            "With only image-level labels, {name} reaches 90% of the fully supervised segmentation accuracy.; "
            "On {data}, {name} improves the {metric} by 2.4 points."
        ),
    ),
    "object detection": Area(
        field="computer vision",
        tasks=_v(
            "object detection; 3D object detection from LiDAR; multi-object tracking; small object detection; "
            "open-world object detection"
        ),
        methods=_v("detection transformer; anchor-free detector; query-based tracker; feature pyramid network"),
        parts=_v("Det; YOLO; Track; Box; Anchor"),
        objects=_v("bounding boxes; object queries; point clouds; region proposals; feature pyramids"),
        challenges=_v("occlusion; small objects; long-tailed categories; real-time constraints"),
        data=_v("MS COCO; the nuScenes dataset; the KITTI benchmark; the Waymo Open Dataset; MOT17"),
        metrics=_v("average precision (AP); MOTA; frames per second"),
        findings=_v(
            "{name} detects small objects with higher recall while running in real time.; "
            "Tracking by query propagation keeps identities through long occlusions."
        ),
    ),
    "3d vision": Area(
        field="3D computer vision",
        tasks=_v(
            "novel view synthesis; 3D scene reconstruction; monocular depth estimation; neural radiance field "
            "rendering; multi-view stereo; 3D human pose estimation"
        ),
        methods=_v("Gaussian splatting pipeline; neural radiance field; feed-forward reconstruction network"),
        parts=_v("Splat; NeRF; Depth; Gauss; Recon; Voxel"),
        objects=_v("3D Gaussians; camera poses; depth maps; point clouds; meshes; multi-view images"),
        challenges=_v("sparse input views; unknown camera poses; reflective surfaces; large unbounded scenes"),
        data=_v("RealEstate10K; ScanNet; the DTU benchmark; the Mip-NeRF 360 scenes; KITTI"),
        metrics=_v("PSNR; SSIM; Chamfer distance; absolute relative depth error"),
        findings=_v(
            "{name} reconstructs a scene from a single image in under a second.; "
            "The reconstruction stays sharp behind occlusions, where prior methods produce blur."
        ),
    ),
    "image generation": Area(
        field="generative modeling",
        tasks=_v(
            "text-to-image generation; image editing; diffusion model sampling; video generation; "
            "controllable image synthesis"
        ),
        methods=_v(
            "latent diffusion model; consistency model; flow matching model; classifier-free guidance scheme; "
            "autoregressive image tokenizer"
        ),
        parts=_v("Diff; Flow; Gen; Pixel; Dream; Paint"),
        objects=_v("noise schedules; latent codes; text prompts; denoising steps; attention maps"),
        challenges=_v("slow sampling; poor prompt adherence; temporal flicker; memorization of training images"),
        data=_v("ImageNet 256x256; MS-COCO captions; LAION subsets; the UCF-101 videos"),
        metrics=_v("FID; CLIP score; human preference rate"),
        findings=_v(
            "{name} generates images in four denoising steps with FID close to a 50-step sampler.; "
            "Editing stays faithful to the source image over many rounds."
        ),
    ),
    "semantic parsing": Area(
        field="natural language processing",
        tasks=_v(
            "semantic parsing; text-to-SQL parsing; compositional semantic parsing; code generation from "
            "natural language; question answering over knowledge bases"
        ),
        methods=_v(
            "grammar-constrained decoder; sequence-to-sequence parser; schema-linking encoder; neural semantic parser"
        ),
        parts=_v("Parse; SQL; Logic; Lambda; Schema"),
        objects=_v(
            "logical forms; SQL queries; database schemas; natural language utterances; meaning "
            "representations; lambda calculus expressions"
        ),
        challenges=_v("compositional generalization; unseen database schemas; scarce annotated logical forms"),
        data=_v("Spider; GeoQuery; ATIS; the SCAN benchmark; WebQuestionsSP; CFQ"),
        metrics=_v("exact match accuracy; execution accuracy; denotation accuracy"),
        findings=_v(
            "{name} parses utterances into logical forms that execute correctly on unseen databases.; "
            "Constraining decoding to the grammar removes all syntactically invalid SQL queries.; "
            "Semantic parsing accuracy on compositional splits improves by 11 points."
        ),
    ),
    "machine translation": Area(
        field="natural language processing",
        tasks=_v(
            "neural machine translation; low-resource machine translation; multilingual translation; "
            "document-level translation; speech translation"
        ),
        methods=_v("multilingual encoder-decoder; back-translation scheme; translation memory model"),
        parts=_v("Trans; Lingua; MT; Polyglot"),
        objects=_v("parallel corpora; source sentences; target languages; subword vocabularies"),
        challenges=_v("scarce parallel data; hallucinated translations; rare words; domain mismatch"),
        data=_v("WMT14 English-German; FLORES-200; IWSLT; the OPUS corpora"),
        metrics=_v("BLEU; chrF; COMET"),
        findings=_v(
            "{name} improves translation into low-resource languages by 3 BLEU.; "
            "Back-translated data helps most when the parallel corpus is small."
        ),
    ),
    "language model reasoning": Area(
        field="natural language processing",
        tasks=_v(
            "chain-of-thought reasoning; instruction tuning; alignment of large language models; "
            "in-context learning; mathematical reasoning with language models; retrieval-augmented generation"
        ),
        methods=_v(
            "preference optimization objective; self-consistency decoding; process reward model; "
            "retrieval-augmented language model"
        ),
        parts=_v("LLM; Reason; Chain; Align; Prompt; Instruct"),
        objects=_v(
            "large language models; reasoning chains; human preferences; prompts; retrieved passages; reward models"
        ),
        challenges=_v("hallucination; reward hacking; long contexts; brittle prompts"),
        data=_v("GSM8K; MATH; MMLU; TruthfulQA; Natural Questions"),
        metrics=_v("accuracy; win rate; pass@1"),
        findings=_v(
            "{name} improves accuracy on GSM8K by 6 points without any additional human labels.; "
            "Longer reasoning chains help on hard problems and hurt on easy ones."
        ),
    ),
    "graph neural networks": Area(
        field="graph learning",
        tasks=_v(
            "node classification; link prediction; graph classification; molecular property prediction; "
            "graph representation learning"
        ),
        methods=_v("message-passing neural network; graph transformer; spectral graph convolution"),
        parts=_v("Graph; GNN; Node; Mol; Edge"),
        objects=_v("node features; adjacency matrices; message passing; molecular graphs; graph spectra"),
        challenges=_v("over-smoothing; heterophily; over-squashing; large graphs"),
        data=_v("the OGB benchmarks; Cora; PubMed citation graphs; QM9; ZINC"),
        metrics=_v("classification accuracy; ROC-AUC; mean absolute error"),
        findings=_v(
            "{name} avoids over-smoothing in networks with more than 64 layers.; "
            "Graph transformers with structural encodings outperform message passing on heterophilic graphs."
        ),
    ),
    "optimization theory": Area(
        field="optimization",
        tasks=_v(
            "stochastic gradient descent; non-convex optimization; convex optimization; distributed "
            "optimization; minimax optimization"
        ),
        methods=_v("adaptive gradient method; variance-reduced algorithm; accelerated first-order method"),
        parts=_v("Adam; SGD; Opt; Grad; Prox"),
        objects=_v("convergence rates; step sizes; gradient noise; smoothness constants; stationary points"),
        challenges=_v("non-convexity; heavy-tailed gradient noise; ill-conditioning; communication cost"),
        data=_v("logistic regression problems; ResNet training on CIFAR-10; quadratic test problems"),
        metrics=_v("iteration complexity; gradient norm; training loss"),
        findings=_v(
            r"We prove a convergence rate of $O(1/\sqrt{{T}})$ to a stationary point for {name}.; "
            "The rate matches the known lower bound for stochastic first-order methods.; "
            "Step sizes chosen by the theory work without tuning in practice."
        ),
        theory=True,
    ),
    "causal inference": Area(
        field="causal inference",
        tasks=_v(
            "causal discovery; treatment effect estimation; causal representation learning; counterfactual prediction"
        ),
        methods=_v("score-based structure learner; doubly robust estimator; instrumental variable method"),
        parts=_v("Causal; DAG; Effect; Counter"),
        objects=_v("directed acyclic graphs; hidden confounders; interventions; treatment effects"),
        challenges=_v("hidden confounding; selection bias; limited interventional data"),
        data=_v("synthetic structural causal models; the IHDP benchmark; single-cell perturbation data"),
        metrics=_v("structural Hamming distance; PEHE; bias of the effect estimate"),
        findings=_v(
            "{name} identifies the causal graph up to its Markov equivalence class.; "
            "The estimator remains consistent when one of the two nuisance models is misspecified."
        ),
        theory=True,
    ),
    "federated learning": Area(
        field="distributed machine learning",
        tasks=_v(
            "federated learning; differentially private training; personalized federated learning; "
            "privacy-preserving machine learning"
        ),
        methods=_v("federated averaging variant; private aggregation protocol; client-drift correction"),
        parts=_v("Fed; Priv; Client; Secure"),
        objects=_v("client updates; privacy budgets; non-IID data; communication rounds"),
        challenges=_v("heterogeneous clients; communication cost; privacy leakage"),
        data=_v("FEMNIST; CIFAR-10 split across 100 clients; the Shakespeare dataset"),
        metrics=_v("test accuracy; communication rounds; privacy loss epsilon"),
        findings=_v(
            "{name} converges in half the communication rounds on non-IID client data.; "
            "Differential privacy costs less than two points of accuracy at epsilon of 8."
        ),
    ),
    "medical image analysis": Area(
        field="medical imaging",
        tasks=_v(
            "medical image segmentation; tumor detection in MRI; chest X-ray classification; histopathology "
            "image analysis; retinal image grading"
        ),
        methods=_v("3D U-Net variant; self-supervised pretraining scheme; multiple-instance learning model"),
        parts=_v("Med; Onco; Radio; Patho; UNet"),
        objects=_v("MRI scans; CT volumes; whole-slide images; organ masks; radiology reports"),
        challenges=_v("scarce expert annotations; scanner variation across hospitals; class imbalance"),
        data=_v("the BraTS challenge; CheXpert; the Camelyon16 slides; the KiTS19 kidney scans"),
        metrics=_v("Dice score; AUC; sensitivity at fixed specificity"),
        findings=_v(
            "{name} generalizes to scans from hospitals unseen during training.; "
            "Pretraining on unlabeled scans halves the annotations needed to reach the same Dice score."
        ),
    ),
    "speech recognition": Area(
        field="speech processing",
        tasks=_v("automatic speech recognition; speaker verification; text-to-speech synthesis; keyword spotting"),
        methods=_v("conformer encoder; self-supervised speech model; streaming transducer"),
        parts=_v("Speech; Wav; Audio; Voice"),
        objects=_v("acoustic features; speech utterances; phoneme sequences; speaker embeddings"),
        challenges=_v("noisy recordings; accented speech; streaming latency"),
        data=_v("LibriSpeech; Common Voice; VoxCeleb; the Switchboard corpus"),
        metrics=_v("word error rate; equal error rate; mean opinion score"),
        findings=_v(
            "{name} lowers the word error rate on accented speech by 12% relative.; "
            "Streaming recognition keeps its latency under 200 ms with no loss in accuracy."
        ),
    ),
    "probabilistic inference": Area(
        field="probabilistic machine learning",
        tasks=_v(
            "variational inference; Gaussian process regression; Bayesian deep learning; Markov chain Monte "
            "Carlo sampling; uncertainty quantification"
        ),
        methods=_v("stochastic variational inference scheme; sparse Gaussian process; Hamiltonian Monte Carlo"),
        parts=_v("Bayes; GP; Var; MCMC; Prior"),
        objects=_v("posterior distributions; kernels; inducing points; evidence lower bounds; predictive uncertainty"),
        challenges=_v("intractable posteriors; large datasets; multimodal posteriors"),
        data=_v("UCI regression datasets; the airline delay data; synthetic mixtures"),
        metrics=_v("test log-likelihood; calibration error; effective sample size"),
        findings=_v(
            "{name} gives calibrated predictive uncertainty at the cost of a single forward pass.; "
            "The variational bound is tight when the inducing points cover the data."
        ),
    ),
}

_VISION = ("semantic segmentation", "object detection", "3d vision", "image generation", "medical image analysis")
_NLP = ("semantic parsing", "machine translation", "language model reasoning", "speech recognition")
_ROBOT = ("robotic manipulation", "robot navigation and locomotion", "reinforcement learning", "3d vision")
_THEORY = ("bandits and online learning", "optimization theory", "probabilistic inference", "causal inference")


@dataclass(frozen=True)
class Venue:
    name: str
    weight: float  # share of papers
    areas: tuple[str, ...]  # drawn uniformly; repeat an area to weight it
    years: tuple[int, int]


# A big generalist venue, a big vision venue (a query about bandits is far from all of its papers), ten
# mid-sized venues of ~0.9 % and four rare ones of ~0.25 %.
VENUES: tuple[Venue, ...] = (
    Venue("neurips", 0.50, tuple(AREAS), (2016, 2025)),
    Venue("cvpr", 0.40, _VISION * 6 + ("robotic manipulation", "robot navigation and locomotion"), (2016, 2025)),
    Venue("icml", 0.009, tuple(AREAS), (2016, 2025)),
    Venue("iclr", 0.009, tuple(AREAS), (2018, 2025)),
    Venue("acl", 0.009, _NLP, (2016, 2025)),
    Venue("emnlp", 0.009, _NLP, (2016, 2024)),
    Venue("icra", 0.009, _ROBOT, (2016, 2025)),
    Venue("iros", 0.009, _ROBOT, (2016, 2024)),
    Venue("aistats", 0.009, _THEORY + ("graph neural networks", "federated learning"), (2016, 2025)),
    Venue("colt", 0.009, _THEORY[:2] * 2 + _THEORY, (2016, 2025)),
    Venue("miccai", 0.009, ("medical image analysis",), (2017, 2025)),
    Venue("aaai", 0.009, tuple(AREAS), (2016, 2025)),
    Venue("corl", 0.0025, _ROBOT, (2018, 2024)),
    Venue("alt", 0.0025, _THEORY[:2], (2018, 2025)),
    Venue("3dv", 0.0025, ("3d vision",), (2024, 2025)),
    Venue("wacv", 0.0025, _VISION, (2020, 2025)),
)

_SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou")
_STATUS = ("Poster",) * 17 + ("Spotlight", "Spotlight", "Oral")
_BASE62 = string.digits + string.ascii_letters
_SUFFIXES = _v("Net; Former; Fusion; Diff; Flow; GPT; Zero; X; Pro; Bench; Lite; Mix; Star")
_ADJECTIVES = _v(
    "Efficient; Scalable; Robust; Provably Efficient; Self-Supervised; Sample-Efficient; Unified; "
    "Lightweight; Adaptive; Hierarchical; Data-Efficient; Generalizable; Fast; Uncertainty-Aware"
)
_BASELINES = _v("strong baselines; the previous state of the art; prior methods; competitive baselines")
_IMPROVES = _v("improves; raises; increases; boosts")


# random.choice/sample spend most of their time in Python-level bookkeeping; random() is one C call.
def _pick(rng: random.Random, options: Sequence[T]) -> T:
    return options[int(rng.random() * len(options))]


def _int(rng: random.Random, low: int, high: int) -> int:
    """Uniform in ``low..high`` inclusive."""
    return low + int(rng.random() * (high - low + 1))


def _sample(rng: random.Random, options: Sequence[str], k: int) -> list[str]:
    """``k`` distinct items of ``options`` in random order (a partial Fisher-Yates shuffle)."""
    pool = list(options)
    for i in range(k):
        j = i + int(rng.random() * (len(pool) - i))
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _title_case(text: str) -> str:
    small = {"a", "an", "and", "for", "from", "in", "of", "on", "the", "to", "via", "with", "by", "over"}
    words = text.split()
    return " ".join(w if (i and w in small) or not w[:1].islower() else _cap(w) for i, w in enumerate(words))


def _coined_name(rng: random.Random, area: Area) -> str:
    stem = "".join(_pick(rng, _SYLLABLES) for _ in range(_pick(rng, (1, 2))))
    form = rng.random()
    if form < 0.5:
        return _cap(stem) + _pick(rng, area.parts)
    if form < 0.8:
        return _pick(rng, area.parts) + _cap(stem) + _pick(rng, _SUFFIXES)
    return _cap(stem + _pick(rng, _SYLLABLES)) + _pick(rng, _SUFFIXES)


def _title(rng: random.Random, area: Area, name: str, task: str, method: str) -> str:
    form = rng.random()
    if form < 0.6:
        return f"{name}: " + _title_case(f"{_pick(rng, _ADJECTIVES)} {method} for {task}")
    if form < 0.8:
        return f"{name}: " + _title_case(f"towards {task} under {_pick(rng, area.challenges)}")
    if form < 0.9:
        return _title_case(f"{_pick(rng, _ADJECTIVES)} {task} with {_pick(rng, area.objects)}")
    if form < 0.95:
        aspect = _pick(rng, ("role", "limits", "power", "robustness"))
        return _title_case(f"on the {aspect} of {_pick(rng, area.objects)} in {task}")
    return _title_case(f"{task} via {method}")


def _a(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


# Sentence templates, in the order an abstract uses them; slots are filled from the paper's area.
_OPENINGS = (
    "{Task} is a fundamental problem in {field}.",
    "{Task} has seen rapid progress, yet {challenge} remains a major obstacle.",
    "Recent work on {task} relies on {obj}, which is costly to obtain at scale.",
    "Many applications of {field} require {task} that remains reliable under {challenge}.",
    "{Task} is central to {field}, but current systems degrade quickly under {challenge}.",
)
_PROBLEMS = (
    "Existing methods model {obj} in isolation and therefore struggle with {challenge}.",
    "However, most prior approaches ignore {obj2}, which limits their accuracy.",
    "A key difficulty is that {obj} and {obj2} are rarely observed together.",
    "Approaches that scale to {challenge2} typically sacrifice accuracy on {obj3}.",
    "As a result, the performance of current methods drops sharply under {challenge2}.",
)
_CONTRIBUTIONS = (
    "In this paper, we propose {name}, {a_method} for {task}.",
    "We introduce {name}, {a_method} that exploits {obj2}.",
    "To address this, we present {name}, which couples {a_method} with an explicit model of {obj}.",
    "This work presents {name}, {a_method} designed for {task} under {challenge}.",
)
_BORROWED = "Our approach borrows {a_other_method} from {other_field} to handle {obj}."
_DETAILS = (
    "The key idea is to learn a joint representation of {obj} and {obj2}.",
    "{name} first estimates {obj} and then refines {obj2} in a second stage.",
    "Unlike previous work, {name} does not require {obj3} at test time.",
    "We further show that the effect of {challenge} can be reduced by a simple change of the training objective.",
    "A lightweight module predicts {obj2} from {obj}, adding only {overhead}% to the computation.",
    "To cope with {challenge2}, we introduce a regularizer that keeps {obj3} consistent across training stages.",
    "The resulting objective can be optimized end to end with standard stochastic gradient methods.",
    "We analyse when {obj} is informative about {obj2} and derive a criterion for choosing between them.",
    "Our design is modular, so it can be combined with any existing {method2}.",
    "In contrast to methods that treat {obj3} as fixed, {name} updates them online as new data arrive.",
)
_THEORY_NOTE = "Our analysis relies on a new concentration argument for {obj} that may be of independent interest."
_RESULTS = (
    "Experiments on {data} and {data2} show that {name} {improves} {metric} by {gain}% over {baselines}.",
    "On {data}, {name} outperforms {baselines} in {metric}.",
    "Extensive experiments on {data2} demonstrate consistent gains in {metric}.",
)
_ORACLE = "On {data2}, it reduces the gap to an oracle with access to {obj} by {gap}%."
_ANALYSES = (
    "Ablations show that modeling {obj2} accounts for most of the improvement.",
    "We also analyse failure cases, which arise mostly under {challenge}.",
    "The gains are largest in the low-data regime, with {shots} labelled examples.",
)
_CODE = "Code is available at https://github.com/{slug}-lab/{slug}."


def _abstract(rng: random.Random, area: Area, name: str, task: str, method: str, other: Area | None) -> str:
    obj, obj2, obj3 = _sample(rng, area.objects, 3)
    challenge, challenge2 = _sample(rng, area.challenges, 2)
    data, data2 = _sample(rng, area.data, 2)
    slots = {
        "name": name,
        "task": task,
        "Task": _cap(task),
        "field": area.field,
        "a_method": _a(method),
        "method2": _pick(rng, area.methods),
        "obj": obj,
        "obj2": obj2,
        "obj3": obj3,
        "challenge": challenge,
        "challenge2": challenge2,
        "data": data,
        "data2": data2,
        "metric": _pick(rng, area.metrics),
        "improves": _pick(rng, _IMPROVES),
        "baselines": _pick(rng, _BASELINES),
        "gain": f"{rng.uniform(0.5, 12):.1f}",
        "overhead": _int(rng, 2, 15),
        "gap": _int(rng, 20, 70),
        "shots": _int(rng, 1, 10) * 10,
        "slug": name.lower(),
    }
    parts = [_pick(rng, _OPENINGS)]
    parts += _sample(rng, _PROBLEMS, _pick(rng, (0, 1, 1, 2, 2)))
    parts.append(_pick(rng, _CONTRIBUTIONS))
    if other is not None:  # an interdisciplinary paper borrows from a second area
        slots |= {"a_other_method": _a(_pick(rng, other.methods)), "other_field": other.field}
        parts.append(_BORROWED)
    parts += _sample(rng, _DETAILS, _pick(rng, (1, 2, 2, 3, 3, 4, 4, 5, 6, 8, 10)))
    parts += _sample(rng, area.findings, _pick(rng, (1, 1, 2)))
    if area.theory and rng.random() < 0.6:
        parts.append(_THEORY_NOTE)
    parts.append(_pick(rng, _RESULTS))
    if rng.random() < 0.4:
        parts.append(_ORACLE)
    if rng.random() < 0.45:
        parts.append(_pick(rng, _ANALYSES))
    if rng.random() < 0.3:
        parts.append(_CODE)
    return " ".join(p.format(**slots) for p in parts)


def _paper_key(rng: random.Random) -> str:
    """Ten base-62 characters, like an OpenReview forum id."""
    bits, out = rng.getrandbits(60), []
    for _ in range(10):
        bits, d = divmod(bits, 62)
        out.append(_BASE62[d])
    return "".join(out)


@functools.cache
def _year_weights(n_years: int) -> list[float]:
    """Cumulative weights: each year holds 25 % more papers than the one before (conferences grow)."""
    return list(itertools.accumulate(1.25**i for i in range(n_years)))


def make_abstracts(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` distinct synthetic conference papers (see the module docstring); the same for the same seed."""
    rng = random.Random(seed)
    cumulative: list[float] = []
    total = 0.0
    for v in VENUES:
        total += v.weight
        cumulative.append(total)
    titles: set[str] = set()
    ids: set[str] = set()
    names: set[str] = set()
    records = []
    for _ in range(n):
        venue = VENUES[min(len(VENUES) - 1, bisect.bisect(cumulative, rng.random() * total))]
        area_key = _pick(rng, venue.areas)
        area = AREAS[area_key]
        other = AREAS[_pick(rng, tuple(AREAS))] if rng.random() < 0.15 else None
        first, last = venue.years
        year = rng.choices(range(first, last + 1), cum_weights=_year_weights(last - first + 1))[0]
        while True:
            name = _coined_name(rng, area)
            task, method = _pick(rng, area.tasks), _pick(rng, area.methods)
            title = _title(rng, area, name, task, method)
            if name not in names and title not in titles:
                break
        names.add(name)
        titles.add(title)
        key = _paper_key(rng)
        while f"{venue.name}{year}-{key}" in ids:
            key = _paper_key(rng)
        ids.add(f"{venue.name}{year}-{key}")
        records.append(
            {
                "id": f"{venue.name}{year}-{key}",
                "venue": venue.name,
                "year": year,
                "title": title,
                "abstract": _abstract(rng, area, name, task, method, other),
                "status": _pick(rng, _STATUS),
                "track": "datasets" if venue.name == "neurips" and rng.random() < 0.08 else "main",
                "primary_area": area_key,
            }
        )
    return records


def write_abstracts(path: Path, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Write ``make_abstracts(n, seed)`` to ``path`` as JSONL (the format of ml_abstracts); returns the records."""
    records = make_abstracts(n, seed)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return records
