"""The multi-process server: `args` (command line), `launch` (processes, readiness, shutdown),
the front end: `api_server` (the app and its routes), `frontend` (its sockets, `listen`),
`generate` (one request, streamed or not), `limits` (body size, JSON depth, API key), `errors`,
`protocol` (the wire format); `shell` (chat in the terminal), `ipc` (ZeroMQ queues),
`process` (what every worker does first), `tp_ranks` (N scheduler ranks without HTTP, for tests).

Nothing heavy is imported here: worker processes import only what their role needs.
"""
