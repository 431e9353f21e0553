"""Train a small MLP on scikit-learn's digits with srcjax.value_and_grad.

    python examples/train_digits.py [--epochs 12] [--seed 0] [--out DIR] [--show]

The model is a 64-128-10 multilayer perceptron with a tanh hidden layer; the
loss is softmax cross-entropy; parameters are a dict pytree, and the optimizer
(Adam) is plain NumPy over srcjax.tree_util.tree_map. The gradient comes from
``srcjax.value_and_grad(loss)``: srcjax reads ``loss`` and ``predict`` below,
writes their derivative as Python source (``--show`` prints it) and runs it.

The digits data (1797 8x8 images) ships with scikit-learn: nothing is
downloaded. With matplotlib installed, the loss curve is saved as
``loss_curve.png`` in ``--out`` (default: the current directory).
"""

import argparse
import os
import sys
import time

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax.tree_util import tree_map

try:
    from srcjax.nn import log_softmax
except ImportError:  # srcjax.nn not available: the same function, written out

    def log_softmax(logits):
        shifted = logits - jnp.max(logits, axis=-1, keepdims=True)
        return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------


def init_params(rng, sizes=(64, 128, 10)):
    """Glorot-uniform weights, zero biases, float32."""
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        limit = np.sqrt(6.0 / (n_in + n_out))
        params[f"w{i}"] = rng.uniform(-limit, limit, (n_in, n_out)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    return params


def predict(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def loss(params, x, y_onehot):
    logits = predict(params, x)
    return -jnp.mean(jnp.sum(y_onehot * log_softmax(logits), axis=-1))


def accuracy(params, x, labels):
    return float(np.mean(np.argmax(predict(params, x), axis=-1) == labels))


# ---------------------------------------------------------------------------
# Optimizer: Adam over pytrees, in NumPy
# ---------------------------------------------------------------------------


def adam_init(params):
    return {"step": 0, "m": tree_map(np.zeros_like, params), "v": tree_map(np.zeros_like, params)}


def adam_update(params, grads, state, lr=3e-3, b1=0.9, b2=0.999, eps=1e-8):
    step = state["step"] + 1
    m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    scale = lr * np.sqrt(1 - b2**step) / (1 - b1**step)
    new_params = tree_map(
        lambda p, m, v: (p - scale * m / (np.sqrt(v) + eps)).astype(p.dtype), params, m, v
    )
    return new_params, {"step": step, "m": m, "v": v}


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def load_data(seed):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=y
    )
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std[std == 0] = 1.0  # some border pixels are always 0
    x_train = (x_train - mean) / std
    x_test = (x_test - mean) / std
    return x_train, y_train, x_test, y_test


def one_hot(labels, n=10):
    return np.eye(n, dtype=np.float32)[labels]


# ---------------------------------------------------------------------------
# Progress display: rich on a terminal, plain lines otherwise
# ---------------------------------------------------------------------------


class PlainProgress:
    def __init__(self, total_steps):
        self.total_steps = total_steps

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def advance(self):
        pass

    def log(self, line):
        print(line, flush=True)


class RichProgress(PlainProgress):
    def __init__(self, total_steps):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        super().__init__(total_steps)
        self.progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        self.task = self.progress.add_task("training", total=total_steps)

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def advance(self):
        self.progress.advance(self.task)

    def log(self, line):
        self.progress.console.print(line, highlight=False)


def make_progress(total_steps, enabled):
    if enabled and sys.stdout.isatty():
        try:
            return RichProgress(total_steps)
        except ImportError:
            pass
    return PlainProgress(total_steps)


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


def save_loss_curve(path, step_losses, epoch_train, epoch_test, steps_per_epoch):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    ax.plot(np.arange(1, len(step_losses) + 1), step_losses, lw=0.8, alpha=0.4, label="batch")
    epoch_ends = steps_per_epoch * np.arange(1, len(epoch_train) + 1)
    ax.plot(epoch_ends, epoch_train, "o-", label="train (epoch mean)")
    ax.plot(epoch_ends, epoch_test, "s-", label="test")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_yscale("log")
    ax.set_title("MLP 64-128-10 on digits, srcjax.value_and_grad")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description="Train an MLP on digits with srcjax.")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate")
    parser.add_argument("--out", default=".", help="directory for loss_curve.png")
    parser.add_argument("--show", action="store_true", help="print the generated gradient source")
    parser.add_argument("--no-progress", action="store_true", help="plain output only")
    args = parser.parse_args(argv)

    t_start = time.perf_counter()
    x_train, y_train, x_test, y_test = load_data(args.seed)
    y_train_1h, y_test_1h = one_hot(y_train), one_hot(y_test)
    rng = np.random.default_rng(args.seed)
    params = init_params(rng)
    opt_state = adam_init(params)

    loss_and_grad = srcjax.value_and_grad(loss)
    if args.show:
        print(srcjax.source(loss_and_grad))

    n = len(x_train)
    steps_per_epoch = -(-n // args.batch_size)
    print(
        f"digits: {n} train / {len(x_test)} test images, MLP 64-128-10 (tanh), "
        f"Adam lr={args.lr}, batch {args.batch_size}, {args.epochs} epochs"
    )
    step_losses, epoch_train, epoch_test = [], [], []
    with make_progress(args.epochs * steps_per_epoch, not args.no_progress) as progress:
        for epoch in range(1, args.epochs + 1):
            order = rng.permutation(n)
            batch_losses = []
            for start in range(0, n, args.batch_size):
                idx = order[start : start + args.batch_size]
                value, grads = loss_and_grad(params, x_train[idx], y_train_1h[idx])
                params, opt_state = adam_update(params, grads, opt_state, lr=args.lr)
                batch_losses.append(float(value))
                progress.advance()
            step_losses.extend(batch_losses)
            epoch_train.append(float(np.mean(batch_losses)))
            epoch_test.append(float(loss(params, x_test, y_test_1h)))
            progress.log(
                f"epoch {epoch:3d}  train loss {epoch_train[-1]:.4f}  "
                f"test loss {epoch_test[-1]:.4f}  "
                f"train acc {accuracy(params, x_train, y_train):.3f}  "
                f"test acc {accuracy(params, x_test, y_test):.3f}"
            )

    elapsed = time.perf_counter() - t_start
    os.makedirs(args.out, exist_ok=True)
    png = save_loss_curve(
        os.path.join(args.out, "loss_curve.png"),
        step_losses,
        epoch_train,
        epoch_test,
        steps_per_epoch,
    )
    print(f"loss curve saved to {png}" if png else "matplotlib not installed: no loss curve")
    print(f"trained in {elapsed:.1f} s")
    print(f"test accuracy: {accuracy(params, x_test, y_test):.3f}")


if __name__ == "__main__":
    main()
