"""Course tooling: build the student exercises from the solutions (`python -m minisgl_edu.course`)."""
