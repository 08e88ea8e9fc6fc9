"""Queue tasks and scheduler tick jobs.

Importing a task module declares its Huey tasks (Huey finds them by name in API processes, which
enqueue, and in workers, which run them). Nothing else happens at import: the composition root
(`switchboard.wiring.wire`) installs the engine's nudger, the events listener and the tick jobs.
"""
