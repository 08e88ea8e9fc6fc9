"""Queue tasks and scheduler tick jobs.

Importing the package registers every task module's Huey tasks and `@every_tick` jobs, in API
processes (which enqueue) and workers (which run them) alike.
"""

from tasks import webhooks  # noqa: F401  (registers its tasks and tick jobs)
