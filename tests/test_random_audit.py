"""``tests/random_audit.py``: the audit for global random state finds each kind of draw,
reading names through the imports in their scope, and nothing else."""

from __future__ import annotations

from pathlib import Path

from tests.random_audit import global_random_calls


class TestGlobalRandomCalls:
    def test_the_audit_finds_global_calls(self, tmp_path: Path) -> None:
        sample = tmp_path / "bad.py"
        sample.write_text(
            "import random, numpy as np, torch\nrandom.random()\n"
            "np.random.rand(3)\ntorch.manual_seed(0)\nnp.random.default_rng(0)\n"
            "torch.rand(2, generator=torch.Generator().manual_seed(1))\n"
        )
        assert global_random_calls(sample) == {"random.random", "np.random.rand",
                                               "torch.manual_seed"}  # fmt: skip
        sample.write_text("import torch\ntorch.rand(2)\n")
        assert global_random_calls(sample) == {"torch.rand"}

    def test_the_audit_reads_names_through_imports(self, tmp_path: Path) -> None:
        # before: each of these was missed, the audit reading calls by their spelling alone
        sample = tmp_path / "bad.py"
        sample.write_text(
            "from random import random, shuffle as mix\nimport random as r\n"
            "from numpy.random import randint\nimport numpy.random as npr\n"
            "import numpy as numeric\nfrom numpy import random as nr\nimport torch as th\n"
            "from torch import rand\nimport torch\n"
            "random()\nmix([1])\nr.gauss(0, 1)\nrandint(3)\nnpr.rand()\n"
            "numeric.random.normal()\nnr.permutation(3)\nth.randn(2)\nrand(2)\n"
            "torch.random.manual_seed(0)\nth.zeros(2).uniform_()\n"
            "torch.nn.init.normal_(th.zeros(2))\n"
        )
        assert global_random_calls(sample) == {
            "random.random", "random.shuffle", "random.gauss", "np.random.randint",
            "np.random.rand", "np.random.normal", "np.random.permutation", "torch.randn",
            "torch.rand", "torch.random.manual_seed", "tensor.uniform_", "tensor.normal_",
        }  # fmt: skip
        sample.write_text(  # their own generators: not global state
            "import numpy.random as npr\nimport torch as th\nfrom random import Random\n"
            "npr.default_rng(0).random()\nRandom(0).random()\n"
            "g = th.Generator()\nth.rand(2, generator=g)\nth.zeros(2).normal_(generator=g)\n"
        )
        assert global_random_calls(sample) == set()

    def test_the_audit_counts_every_draw_of_the_global_modules(self, tmp_path: Path) -> None:
        # before: each of these was missed, the audit knowing a few functions of random
        # and np.random by name, none of torch.cuda's, nor nn.init's initialisers (nor one
        # imported by name), and taking generator=None for a generator of the call's own
        sample = tmp_path / "bad.py"
        sample.write_text(
            "import random\nimport numpy as np\nimport torch\nfrom torch.nn import init\n"
            "random.betavariate(1, 2)\nrandom.normalvariate(0, 1)\nrandom.randbytes(3)\n"
            "np.random.beta(1, 1)\nnp.random.standard_normal(3)\nnp.random.binomial(3, 0.5)\n"
            "np.random.sample(3)\ntorch.cuda.manual_seed_all(0)\n"
            "torch.rand(2, generator=None)\ninit.kaiming_normal_(torch.zeros(2, 2))\n"
            "torch.nn.init.xavier_uniform_(torch.zeros(2, 2))\n"
            "from torch.nn.init import orthogonal_\northogonal_(torch.zeros(2, 2))\n"
        )
        assert global_random_calls(sample) == {
            "random.betavariate", "random.normalvariate", "random.randbytes", "np.random.beta",
            "np.random.standard_normal", "np.random.binomial", "np.random.sample",
            "torch.cuda.manual_seed_all", "torch.rand", "tensor.kaiming_normal_",
            "tensor.xavier_uniform_", "tensor.orthogonal_",
        }  # fmt: skip
        sample.write_text(  # states of their own, made or read: not global state drawn from
            "import random\nimport numpy as np\nrandom.Random(0).random()\n"
            "random.SystemRandom().random()\nstate = random.getstate()\n"
            "np.random.Generator(np.random.PCG64(np.random.SeedSequence(0))).random()\n"
            "np.random.RandomState(0).rand()\n"
        )
        assert global_random_calls(sample) == set()

    def test_the_audit_reads_names_in_their_scope(self, tmp_path: Path) -> None:
        # before: a name was taken for what the module imported under it wherever it was
        # used, so a parameter or variable named random or torch was audited as the module
        sample = tmp_path / "own.py"
        sample.write_text(
            "import random\nimport numpy as np\nimport torch\n"
            "def given(random):\n    return random.random()\n"
            "def made(seed):\n    np = Rngs(seed)\n    return np.random.rand(3)\n"
            "def shadowed(torch):\n    return torch.rand(2)\n"
            "lambda random: random.gauss(0, 1)\n"
            "[random.random() for random in generators]\n"
            "def handled():\n    try:\n        pass\n    except Exception as random:\n"
            "        random.shuffle(x)\n"
            "def looped(streams):\n    for random in streams:\n        random.random()\n"
            "def bound(g, x):\n    return x.bernoulli(generator=g)\n"
        )
        assert global_random_calls(sample) == set()
        sample.write_text(
            "import random\n"
            "def module_import():\n    return random.random()\n"
            "def own_import():\n    from numpy import random as r\n    return r.rand()\n"
            "def outer():\n    import torch\n    def inner():\n        return torch.rand(2)\n"
            "def elsewhere(random):\n    return random.random()\n"
            "def not_shadowed_here():\n    return random.gauss(0, 1)\n"
            "class Holder:\n    random = Source()\n"
            "    def method(self):\n        return random.choice([1])\n"  # the module's
            "def declared():\n    global random\n    random = None\n    random.uniform(0, 1)\n"
        )
        assert global_random_calls(sample) == {
            "random.random", "np.random.rand", "torch.rand", "random.gauss", "random.choice",
            "random.uniform",
        }  # fmt: skip

    def test_the_audit_finds_a_distributions_draws(self, tmp_path: Path) -> None:
        # before: none was seen; torch.distributions take no generator: every sample()
        # and rsample() draws from the global one
        sample = tmp_path / "bad.py"
        sample.write_text(
            "import torch\nimport torch.distributions as D\n"
            "from torch.distributions import Beta, Normal\n"
            "torch.distributions.Normal(0.0, 1.0).sample()\n"
            "def built():\n    d = Beta(1.0, 1.0)\n    return d.rsample((3,))\n"
            "D.Categorical(probs=torch.ones(3)).sample_n(2)\n"
            "class Holder:\n    def __init__(self):\n        self.d = D.Uniform(0.0, 1.0)\n"
            "    def draw(self):\n        return self.d.sample()\n"
            "def annotated(d: Normal | None, e: 'D.Bernoulli'):\n"
            "    return d.sample(), e.sample()\n"
        )
        assert global_random_calls(sample) == {
            "torch.distributions.sample", "torch.distributions.rsample",
            "torch.distributions.sample_n",
        }  # fmt: skip
        sample.write_text(  # not distributions, or not drawn from
            "import random\nimport torch\nfrom torch import distributions\n"
            "rows.sample(3)\nsampler.rsample((2,))\nrandom.Random(0).sample([1, 2], 1)\n"
            "distributions.kl_divergence(p, q)\n"
            "d = distributions.Normal(0.0, 1.0)\nd.log_prob(torch.zeros(1))\n"
            "def keyed(d):\n    return d.sample()\n"  # a parameter: not the module's d
        )
        assert global_random_calls(sample) == set()

    def test_the_audit_finds_dropout_and_bernoulli(self, tmp_path: Path) -> None:
        # before: none of these was seen
        sample = tmp_path / "bad.py"
        sample.write_text(
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
            "x = torch.zeros(4)\n"
            "F.dropout(x, 0.5)\nF.dropout2d(x, training=self.training)\n"
            "F.alpha_dropout(x, 0.5, True)\nnn.Dropout(0.1)\ntorch.nn.AlphaDropout(0.2)\n"
            "torch.dropout(x, 0.5, True)\nF.gumbel_softmax(x)\n"
            "x.bernoulli()\ntorch.bernoulli(x)\ntorch.full((2,), 0.5).bernoulli()\n"
        )
        assert global_random_calls(sample) == {
            "torch.nn.functional.dropout", "torch.nn.functional.dropout2d",
            "torch.nn.functional.alpha_dropout", "torch.nn.Dropout", "torch.nn.AlphaDropout",
            "torch.dropout", "torch.nn.functional.gumbel_softmax", "tensor.bernoulli",
            "torch.bernoulli",
        }  # fmt: skip
        sample.write_text(  # not training, or a generator of their own
            "import torch\nimport torch.nn.functional as F\n"
            "x = torch.zeros(4)\ng = torch.Generator()\n"
            "F.dropout(x, 0.5, training=False)\nF.dropout(x, 0.5, False)\n"
            "F.alpha_dropout(x, 0.5)\ntorch.dropout(x, 0.5, False)\n"
            "x.bernoulli(generator=g)\ntorch.bernoulli(x, generator=g)\n"
        )
        assert global_random_calls(sample) == set()
