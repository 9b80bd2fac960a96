"""The multi-process server: `args` (command line), `launch` (processes, readiness, shutdown),
`api_server` (OpenAI HTTP endpoints), `shell` (chat in the terminal), `ipc` (ZeroMQ queues),
`scheduler_io` (the scheduler's sockets), `process` (what every worker does first).

Nothing heavy is imported here: worker processes import only what their role needs.
"""
