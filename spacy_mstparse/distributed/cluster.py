"""Ray for the distributed commands: imported lazily (the optional extra
``spacy-mstparse[ray]``), a local instance with N CPUs or an existing
cluster, and results gathered in order with a dead worker or a failed task
turned into one ``DistributedError`` line (expected input errors raised on a
worker are re-raised as they are, so the CLI reports them like ``parse``).
"""
import logging
import os
from contextlib import contextmanager
from typing import Iterator, List, Optional, Sequence, Tuple, Type

RAY_MISSING = 'Ray is not installed: pip install "spacy-mstparse[ray]"'


class DistributedError(RuntimeError):
    """A distributed command that cannot go on (no Ray, a dead worker, ...)."""


def require_ray():
    """The ``ray`` module, or ``DistributedError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise DistributedError(RAY_MISSING) from None
    return ray


@contextmanager
def ray_session(workers: int, address: Optional[str] = None) -> Iterator[object]:
    """Ray, connected: a running instance is reused; else ``address``
    ("auto" or ``ray://host:port`` / ``host:port``) joins a cluster, and
    without it a local instance with ``workers`` CPUs starts (and stops at
    the end), its workers at the command's own priority (Ray's default
    lowers it by 15). Ray's own logging is kept to errors."""
    ray = require_ray()
    if workers < 1:
        raise DistributedError(f"--workers must be >= 1, got {workers}")
    started = False
    if not ray.is_initialized():
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")
        # Ray starts its workers 15 nice levels below the raylet by default;
        # here they do the command's own work: same priority as the command.
        os.environ.setdefault("RAY_worker_niceness", "0")
        kwargs = dict(include_dashboard=False, logging_level=logging.ERROR,
                      log_to_driver=False)
        try:
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(address="local", num_cpus=workers, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as err:
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise DistributedError(f"Could not start or join {where}: {err}") from None
        started = True
    try:
        n_cpus = int(ray.cluster_resources().get("CPU", 0))
        if n_cpus < workers:  # the actors (one CPU each) would wait forever
            raise DistributedError(
                f"--workers {workers} needs {workers} CPUs; the Ray cluster has {n_cpus}")
        yield ray
    finally:
        if started:
            ray.shutdown()


def gather(refs: Sequence[object], names: Sequence[str],
           expected: Tuple[Type[BaseException], ...] = (),
           progress: Optional[bool] = False, desc: str = "") -> List[object]:
    """``ray.get`` of every ref, in order. An exception of an ``expected``
    type raised by a task is re-raised as it is; any other task error or a
    worker that died raises ``DistributedError`` naming the task.
    ``progress``: a bar ``desc`` of the results in (None: on a terminal)."""
    ray = require_ray()
    from ray.exceptions import RayActorError, RayError, RayTaskError

    from ..progress import progress_bar

    results = []
    with progress_bar(total=len(refs), desc=desc, unit=" tasks", show=progress) as bar:
        for ref, name in zip(refs, names):
            try:
                results.append(ray.get(ref))
            except RayTaskError as err:
                cause = getattr(err, "cause", None)
                if isinstance(cause, expected):
                    raise cause from None
                detail = (f"{type(cause).__name__}: {cause}" if cause is not None
                          else _first_line(err))
                raise DistributedError(f"{name} failed on a Ray worker: {detail}") from None
            except (RayActorError, RayError) as err:
                raise DistributedError(
                    f"a Ray worker died, task: {name} ({_first_line(err)})") from None
            bar.update()
    return results


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


def kill_actors(actors: Sequence[object]) -> None:
    """Stop the actors (when joining a cluster they would outlive the command)."""
    ray = require_ray()
    for actor in actors:
        try:
            ray.kill(actor)
        except Exception:  # already dead
            pass
