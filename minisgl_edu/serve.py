"""`python -m minisgl_edu.serve`: start the OpenAI-compatible server (or `--shell` to chat here).

Where this sits on the request path: it starts everything on it. See `server/launch.py` for the
processes and `server/api_server.py` for the endpoints. Try:

    python -m minisgl_edu.serve            # http://127.0.0.1:1919, model smollm2-135m
    ps aux | grep '[m]inisgl'              # the scheduler, tokenizer and detokenizer processes
    curl http://127.0.0.1:1919/v1/chat/completions -H 'Content-Type: application/json' \\
        -d '{"messages": [{"role": "user", "content": "What is a KV cache?"}], "stream": true}'
"""

from __future__ import annotations

import sys
from typing import Optional


def main(argv: Optional[list[str]] = None) -> int:
    from minisgl_edu.server.args import parse_args
    from minisgl_edu.server.launch import launch_server

    return launch_server(parse_args(argv))


# The guard matters: worker processes are started with "spawn", which imports this module again
# in every child; without it each child would start a server of its own.
if __name__ == "__main__":
    sys.exit(main())
