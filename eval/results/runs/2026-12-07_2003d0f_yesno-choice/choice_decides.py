"""Would the forced choice alone decide a yes/no question better than the shipped claim head?
    python choice_decides.py > analysis.txt
PubMedQA dev questions of the stance split (as `bench yesno-probe --dev 0` reads them, seed 0), each stated as a
claim by the model and judged against its own abstract, all from the memo filled by that probe (a missing entry
would be asked of the model). Decisions compared, maybe = PubMedQA's third label:
  head:   the shipped claim head, as the yes/no path decides (not stated at P >= 0.7 -> maybe, else the likelier
          of supports / refutes)
  choice: where the choice was asked (the gate), yes when the model prefers the statement to its opposite
          (preference > 0) else no; where it was not asked, the head's decision
  choice, no maybe: the same, never maybe for gated questions
Accuracy with Wilson 95 % CI, recall per label, the largest predicted/true share."""
import tempfile
from collections import Counter
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering import stance as S
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import split_of, pubmedqa
from rag.evaluation.bench.stance_train import judge_for
from rag.evaluation.bench._splits import wilson

shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = judge_for(a)
head = S.bundled_head()
questions = pubmedqa(shared)
order = np.random.default_rng(0).permutation(len(questions))
dev = [questions[int(i)] for i in order if split_of("pubmedqa", questions[int(i)]["id"]) == "dev"]
ANS = ("yes", "no", "maybe")
truth, head_d, choice_d, nomaybe_d, gated = [], [], [], [], 0
for q in dev:
    st = judge.statement_of(q["question"]) or q["question"]
    ex = S.excerpt_of(judge.scorer, st, q["abstract"], sentences=judge.sentences)
    probs, pref, _ = judge.measured(st, "claim", "", ex, opposite=True)
    cal = head.probabilities("claim", S.features(st, ex, probs, pref))
    h = "maybe" if cal["not stated"] >= 0.7 else ("yes" if cal["supports"] >= cal["refutes"] else "no")
    truth.append(q["label"]); head_d.append(h)
    if pref is None:
        choice_d.append(h); nomaybe_d.append(h)
    else:
        gated += 1
        c = "yes" if pref > 0 else "no"
        nomaybe_d.append(c); choice_d.append("maybe" if cal["not stated"] >= 0.7 else c)
print(f"{len(dev)} dev questions, {gated} gated (choice asked); labels {Counter(truth)}")
for name, d in (("head (shipped yes/no path)", head_d), ("choice where asked, maybe at P(not) >= 0.7", choice_d),
                ("choice where asked, no maybe", nomaybe_d)):
    right = sum(x == y for x, y in zip(d, truth)); lo, hi = wilson(right, len(d))
    rec = {l: round(sum(x == y == l for x, y in zip(d, truth)) / max(1, truth.count(l)), 2) for l in ANS}
    said = Counter(d); share = max(said[l] / truth.count(l) for l in ANS if truth.count(l))
    print(f"{name}: accuracy {right / len(d):.3f} [{lo:.3f}, {hi:.3f}]; recall {rec}; predicted {dict(said)}; max share {share:.2f}")
g = [i for i, q in enumerate(dev)]
