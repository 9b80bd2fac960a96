"""Loaded by every pytest run in this repository (tests/, notebooks/, solutions/, exercises/),
before any test or notebook kernel imports torch.

The tests and the notebooks' kernels run the engine in their own process, beside the server's
worker processes, a notebook kernel or a second pytest: the same sharing of 2 cores that
`process.set_worker_environment` sets the workers up for (`GOMP_SPINCOUNT=1000`, read once when
torch loads OpenMP; the kernels inherit it). Without it, torch's OpenMP threads spin for their
next op while another process waits for the core: a mutant's grading that takes 9 s took 133 s
with a second pytest running (load 2.7 on 2 cores), and a test's verdict could hang on that.
"""

from minisgl_edu.process import set_worker_environment

set_worker_environment()
